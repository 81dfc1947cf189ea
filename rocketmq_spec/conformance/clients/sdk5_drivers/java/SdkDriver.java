// Drives Apache RocketMQ's 5.x Java SDK (org.apache.rocketmq:rocketmq-client-java, gRPC) as a client-suite
// driver:  SdkDriver SCENARIO   (configuration in RMQ_* variables; see README.md beside it), with the same
// scenarios and JSON events as py_driver.py. The SDK keeps its default settings: only the
// endpoint, credentials, TLS (ClientConfiguration.enableSsl, on by default, set from RMQ_TLS) and what a
// scenario needs are set. Compiled by rocketmq_spec.conformance.clients.sdk5 against the SDK jar from Maven Central.
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientConfigurationBuilder;
import org.apache.rocketmq.client.apis.ClientException;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.StaticSessionCredentialsProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageBuilder;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.ProducerBuilder;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;

public class SdkDriver {
    static final int UNSUPPORTED = 3;
    static final long SHUTDOWN_MARGIN_MS = 5000;
    /** The invisible duration of a receive (the SDK's examples' 15 s). */
    static final Duration RECEIVE_INVISIBLE = Duration.ofSeconds(15);
    /** consume-nack changes a first delivery's invisible duration to this, then acks the redelivery. */
    static final Duration NACK_INVISIBLE = Duration.ofSeconds(5);
    /** consume-extend changes each delivery's invisible duration to this (more time), then acks it. */
    static final Duration EXTEND_INVISIBLE = Duration.ofSeconds(30);
    /** The simple consumer's long-polling wait: the SDK has no default (its builder requires one); 30 s is
     * its examples' value and the proxy's default. */
    static final Duration AWAIT = Duration.ofSeconds(30);
    static final int BATCH = 16;

    static final Map<String, String> ENV = System.getenv();
    static final ClientServiceProvider PROVIDER = ClientServiceProvider.loadService();
    static final Object OUT = new Object();

    private static String quote(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof Number || value instanceof Boolean) {
            return value.toString();
        }
        if (value instanceof List) {
            List<String> parts = new ArrayList<>();
            for (Object item : (List<?>) value) {
                parts.add(quote(item));
            }
            return "[" + String.join(",", parts) + "]";
        }
        StringBuilder b = new StringBuilder("\"");
        for (char c : value.toString().toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static void emit(String event, Object... fields) {
        StringBuilder b = new StringBuilder("{\"event\":").append(quote(event));
        for (int i = 0; i + 1 < fields.length; i += 2) {
            b.append(',').append(quote(fields[i])).append(':').append(quote(fields[i + 1]));
        }
        synchronized (OUT) {
            System.out.println(b.append('}'));
            System.out.flush();
        }
    }

    static String env(String name, String fallback) {
        String value = ENV.get(name);
        return value == null || value.isEmpty() ? fallback : value;
    }

    static int count() {
        return Integer.parseInt(env("RMQ_COUNT", "1"));
    }

    /** When the scenario stops, leaving the SDK time to shut down. */
    static long deadline() {
        long total = (long) (Double.parseDouble(env("RMQ_TIMEOUT_S", "60")) * 1000);
        return System.currentTimeMillis() + Math.max(total - SHUTDOWN_MARGIN_MS, total / 2);
    }

    static void received(MessageView m) {
        List<String> keys = new ArrayList<>(m.getKeys());
        Collections.sort(keys);
        byte[] body = new byte[m.getBody().remaining()];
        m.getBody().duplicate().get(body);
        emit("received", "msgId", m.getMessageId().toString(), "topic", m.getTopic(),
            "body_b64", Base64.getEncoder().encodeToString(body), "reconsumeTimes", m.getDeliveryAttempt() - 1,
            "tag", m.getTag().orElse(null), "keys", keys, "group", m.getMessageGroup().orElse(null),
            "deliveryTimestamp", m.getDeliveryTimestamp().orElse(null), "at", System.currentTimeMillis());
    }

    /** RMQ_BODY_B64 when set, else the index in decimal and a dash, padded with 'x' to RMQ_BODY_SIZE. */
    static byte[] body(int index) {
        String exact = env("RMQ_BODY_B64", null);
        if (exact != null) {
            return Base64.getDecoder().decode(exact);
        }
        StringBuilder text = new StringBuilder().append(index).append('-');
        int size = Integer.parseInt(env("RMQ_BODY_SIZE", "16"));
        while (text.length() < size) {
            text.append('x');
        }
        return text.toString().getBytes(StandardCharsets.US_ASCII);
    }

    static MessageBuilder message(int index) {
        MessageBuilder message = PROVIDER.newMessageBuilder().setTopic(ENV.get("RMQ_TOPIC")).setBody(body(index));
        String tag = env("RMQ_TAG", null);
        if (tag != null) {
            message.setTag(tag);
        }
        String keys = env("RMQ_KEYS", null);
        if (keys != null) {
            message.setKeys(keys.trim().split(" +"));
        }
        return message;
    }

    static ClientConfiguration configuration() {
        ClientConfigurationBuilder builder = ClientConfiguration.newBuilder().setEndpoints(ENV.get("RMQ_ENDPOINT"))
            .enableSsl("1".equals(ENV.get("RMQ_TLS")));
        String accessKey = env("RMQ_ACCESS_KEY", null);
        if (accessKey != null) {
            builder.setCredentialProvider(new StaticSessionCredentialsProvider(accessKey, env("RMQ_SECRET_KEY", "")));
        }
        return builder.build();
    }

    static Map<String, FilterExpression> subscriptions() {
        return Collections.singletonMap(ENV.get("RMQ_TOPIC"),
            new FilterExpression(env("RMQ_TAG", "*"), FilterExpressionType.TAG));
    }

    static TransactionResolution resolution(String answer) {
        switch (answer) {
            case "commit": return TransactionResolution.COMMIT;
            case "rollback": return TransactionResolution.ROLLBACK;
            default: return TransactionResolution.UNKNOWN;
        }
    }

    static void produce(String kind) throws Exception {
        String answer = env("RMQ_TX_ANSWER", "commit");
        String checkAnswer = env("RMQ_TX_CHECK_ANSWER", "commit");
        Set<String> open = ConcurrentHashMap.newKeySet();
        ProducerBuilder builder = PROVIDER.newProducerBuilder().setClientConfiguration(configuration())
            .setTopics(ENV.get("RMQ_TOPIC"));
        if (kind.equals("transaction")) {
            builder.setTransactionChecker(view -> {
                emit("checked", "msgId", view.getMessageId().toString(), "answer", checkAnswer);
                if (!checkAnswer.equals("unknown")) {
                    open.remove(view.getMessageId().toString());
                }
                return resolution(checkAnswer);
            });
        }
        int groups = Integer.parseInt(env("RMQ_MESSAGE_GROUPS", "2"));
        try (Producer producer = builder.build()) {
            emit("ready");
            long end = deadline();
            List<CompletableFuture<?>> pending = new ArrayList<>();
            for (int i = 0; i < count() && System.currentTimeMillis() < end; i++) {
                int index = i;
                MessageBuilder message = message(i);
                String group = kind.equals("fifo") ? "g" + (i % groups) : null;
                if (group != null) {
                    message.setMessageGroup(group);
                }
                if (kind.equals("delay")) {
                    message.setDeliveryTimestamp(System.currentTimeMillis() + Long.parseLong(ENV.get("RMQ_DELAY_MS")));
                }
                Consumer<SendReceipt> sent = receipt -> emit("sent", "index", index, "msgId",
                    receipt.getMessageId().toString(), "status", null, "group", group, "at", System.currentTimeMillis());
                try {
                    if (kind.equals("async")) {
                        pending.add(producer.sendAsync(message.build()).whenComplete((receipt, error) -> {
                            if (error != null) {
                                emit("error", "stage", "send", "message", error.toString());
                            } else {
                                sent.accept(receipt);
                            }
                        }));
                    } else if (kind.equals("transaction")) {
                        Transaction transaction = producer.beginTransaction();
                        SendReceipt receipt = producer.send(message.build(), transaction);
                        if (answer.equals("unknown")) {
                            open.add(receipt.getMessageId().toString());
                        } else if (answer.equals("commit")) {
                            transaction.commit();
                        } else {
                            transaction.rollback();
                        }
                        sent.accept(receipt);
                    } else {
                        sent.accept(producer.send(message.build()));
                    }
                } catch (Exception e) {
                    emit("error", "stage", "send", "message", e.toString());
                }
            }
            for (CompletableFuture<?> future : pending) {
                try {
                    future.join();
                } catch (RuntimeException reported) {
                    // already an error event
                }
            }
            while (!open.isEmpty() && System.currentTimeMillis() < end) {
                Thread.sleep(100);
            }
            // Started RMQ_IDLE_S more: the SDK heartbeats 1 s after start, then every 10 s (ClientManagerImpl).
            Thread.sleep(Math.max(0, Math.min(idleMs(), end - System.currentTimeMillis())));
        }
    }

    /** consume-extend: the delivery gets more time (its invisible duration changed), then is acked; the ack
     * must carry the receipt handle that change answered, which the SDK keeps on the view. */
    static void extendThenAck(SimpleConsumer consumer, MessageView view) throws ClientException {
        consumer.changeInvisibleDuration(view, EXTEND_INVISIBLE);
        consumer.ack(view);
    }

    static long idleMs() {
        return (long) (Double.parseDouble(env("RMQ_IDLE_S", "0")) * 1000);
    }

    /** Receive and ack; with nack, a first delivery's invisible duration is changed instead and only its
     * redelivery is acked (and counted); with extend, each delivery is extended before its ack. */
    static void consumeSimple(boolean nack, boolean extend) throws Exception {
        try (SimpleConsumer consumer = PROVIDER.newSimpleConsumerBuilder().setClientConfiguration(configuration())
            .setConsumerGroup(ENV.get("RMQ_GROUP")).setAwaitDuration(AWAIT)
            .setSubscriptionExpressions(subscriptions()).build()) {
            emit("ready");
            long end = deadline();
            int done = 0;
            while (done < count() && System.currentTimeMillis() < end) {
                for (MessageView view : consumer.receive(BATCH, RECEIVE_INVISIBLE)) {
                    received(view);
                    if (nack && view.getDeliveryAttempt() <= 1) {
                        consumer.changeInvisibleDuration(view, NACK_INVISIBLE);
                    } else {
                        if (extend) {
                            extendThenAck(consumer, view);
                        } else {
                            consumer.ack(view);
                        }
                        done++;
                    }
                }
            }
        }
    }

    static PushConsumer pushConsumer(Consumer<MessageView> listener) throws Exception {
        return PROVIDER.newPushConsumerBuilder().setClientConfiguration(configuration())
            .setConsumerGroup(ENV.get("RMQ_GROUP")).setSubscriptionExpressions(subscriptions())
            .setMessageListener(view -> {
                listener.accept(view);
                return ConsumeResult.SUCCESS;
            }).build();
    }

    static void consumePush() throws Exception {
        AtomicInteger got = new AtomicInteger();
        try (PushConsumer consumer = pushConsumer(view -> {
            received(view);
            got.incrementAndGet();
        })) {
            emit("ready");
            long end = deadline();
            while (got.get() < count() && System.currentTimeMillis() < end) {
                Thread.sleep(100);
            }
        }
    }

    /** One producer and one push consumer, started, left alone for idleMs and shut down. */
    static void idle(long idleMs) throws Exception {
        try (Producer producer = PROVIDER.newProducerBuilder().setClientConfiguration(configuration())
            .setTopics(ENV.get("RMQ_TOPIC")).build(); PushConsumer consumer = pushConsumer(SdkDriver::received)) {
            emit("ready");
            Thread.sleep(Math.max(0, Math.min(idleMs, deadline() - System.currentTimeMillis())));
        }
    }

    public static void main(String[] argv) throws Exception {
        String scenario = argv.length > 0 ? argv[0] : "";
        String protocol = env("RMQ_PROTOCOL", "grpc");
        if (!protocol.equals("grpc")) {
            emit("unsupported", "reason", "a gRPC SDK does not speak " + protocol);
            System.exit(UNSUPPORTED);
        }
        try {
            switch (scenario) {
                case "produce": produce("normal"); break;
                case "produce-async": produce("async"); break;
                case "produce-delay": produce("delay"); break;
                case "produce-fifo": produce("fifo"); break;
                case "produce-transaction": produce("transaction"); break;
                case "consume-simple":
                case "consume-pop": consumeSimple(false, false); break;
                case "consume-nack": consumeSimple(true, false); break;
                case "consume-extend": consumeSimple(false, true); break;
                case "consume-push": consumePush(); break;
                case "idle": idle(idleMs()); break;
                case "shutdown": idle(0); break;
                default:
                    emit("unsupported", "reason", "scenario '" + scenario + "' is not offered by the Java SDK's driver");
                    System.exit(UNSUPPORTED);
            }
        } catch (Exception e) {  // what the SDK raised (a failed start, say) is an event
            emit("error", "stage", scenario, "message", e.toString());
        }
        emit("done");
        System.exit(0);
    }
}
