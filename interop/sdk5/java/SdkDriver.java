// Drives Apache RocketMQ's 5.x Java SDK (org.apache.rocketmq:rocketmq-client-java, gRPC) from the command
// line with the same commands and JSON events as interop/sdk5/py_driver.py (see interop/sdk5/README.md).
// Compiled by interop/sdk5/install.py against the SDK jar from Maven Central.
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageBuilder;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.ProducerBuilder;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;

public class SdkDriver {
    private static final Object OUT = new Object();

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

    static void received(MessageView m) {
        List<String> keys = new ArrayList<>(m.getKeys());
        Collections.sort(keys);
        byte[] body = new byte[m.getBody().remaining()];
        m.getBody().duplicate().get(body);
        emit("received", "messageId", m.getMessageId().toString(), "topic", m.getTopic(),
            "tag", m.getTag().orElse(null), "keys", keys, "group", m.getMessageGroup().orElse(null),
            "body_b64", Base64.getEncoder().encodeToString(body), "attempt", m.getDeliveryAttempt(),
            "deliveryTimestamp", m.getDeliveryTimestamp().orElse(null), "at", System.currentTimeMillis());
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new HashMap<>();
        a.put("group", "sdk5-group");
        a.put("count", "1");
        a.put("kind", "normal");
        a.put("groups", "2");
        a.put("delay-ms", "3000");
        a.put("resolution", "commit");
        a.put("check", "commit");
        a.put("wait-checks", "0");
        a.put("expect", "1");
        a.put("invisible-s", "20");
        a.put("ack", "yes");
        a.put("idle-timeout", "20");
        a.put("timeout", "60");
        for (int i = 1; i + 1 < argv.length; i += 2) {
            a.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
        }
        ClientServiceProvider provider = ClientServiceProvider.loadService();
        ClientConfiguration config = ClientConfiguration.newBuilder().setEndpoints(a.get("endpoint"))
            .enableSsl(false).setRequestTimeout(Duration.ofSeconds(10)).build();
        boolean ok;
        try {
            switch (argv[0]) {
                case "produce":
                    ok = produce(provider, config, a);
                    break;
                case "receive":
                    ok = receive(provider, config, a);
                    break;
                default:
                    ok = push(provider, config, a);
            }
        } catch (Throwable t) {
            emit("error", "stage", argv[0], "message", t.toString());
            ok = false;
        }
        emit("done", "ok", ok);
        System.exit(ok ? 0 : 1);
    }

    static boolean produce(ClientServiceProvider provider, ClientConfiguration config, Map<String, String> a)
        throws Exception {
        String topic = a.get("topic");
        String kind = a.get("kind");
        AtomicInteger checks = new AtomicInteger();
        ProducerBuilder builder = provider.newProducerBuilder().setClientConfiguration(config).setTopics(topic);
        if (kind.equals("transaction")) {
            builder.setTransactionChecker(view -> {
                checks.incrementAndGet();
                emit("checked", "messageId", view.getMessageId().toString(), "resolution", a.get("check"));
                return a.get("check").equals("commit") ? TransactionResolution.COMMIT : TransactionResolution.ROLLBACK;
            });
        }
        boolean ok = true;
        try (Producer producer = builder.build()) {
            int count = Integer.parseInt(a.get("count"));
            for (int i = 0; i < count; i++) {
                MessageBuilder message = provider.newMessageBuilder().setTopic(topic).setTag("sdk5").setKeys("k" + i)
                    .setBody((kind + "-" + i).getBytes(StandardCharsets.UTF_8));
                String group = kind.equals("fifo") ? "g" + (i % Integer.parseInt(a.get("groups"))) : null;
                if (group != null) {
                    message.setMessageGroup(group);
                }
                if (kind.equals("delay")) {
                    message.setDeliveryTimestamp(System.currentTimeMillis() + Long.parseLong(a.get("delay-ms")));
                }
                try {
                    SendReceipt receipt;
                    if (kind.equals("transaction")) {
                        Transaction transaction = producer.beginTransaction();
                        receipt = producer.send(message.build(), transaction);
                        if (a.get("resolution").equals("commit")) {
                            transaction.commit();
                        } else if (a.get("resolution").equals("rollback")) {
                            transaction.rollback();
                        }
                    } else {
                        receipt = producer.send(message.build());
                    }
                    emit("sent", "index", i, "messageId", receipt.getMessageId().toString(), "group", group,
                        "at", System.currentTimeMillis());
                } catch (Throwable t) {
                    ok = false;
                    emit("error", "stage", "send", "index", i, "message", t.toString());
                }
            }
            long deadline = System.currentTimeMillis() + (long) (Double.parseDouble(a.get("timeout")) * 1000);
            int wanted = Integer.parseInt(a.get("wait-checks"));
            while (checks.get() < wanted && System.currentTimeMillis() < deadline) {
                Thread.sleep(100);
            }
            if (checks.get() < wanted) {
                ok = false;
                emit("error", "stage", "check", "message", checks.get() + " of " + wanted + " checks");
            }
        }
        return ok;
    }

    static boolean receive(ClientServiceProvider provider, ClientConfiguration config, Map<String, String> a)
        throws Exception {
        FilterExpression all = new FilterExpression("*", FilterExpressionType.TAG);
        int expect = Integer.parseInt(a.get("expect"));
        int count = 0;
        try (SimpleConsumer consumer = provider.newSimpleConsumerBuilder().setClientConfiguration(config)
            .setConsumerGroup(a.get("group")).setAwaitDuration(Duration.ofSeconds(5))
            .setSubscriptionExpressions(Collections.singletonMap(a.get("topic"), all)).build()) {
            long deadline = System.currentTimeMillis() + (long) (Double.parseDouble(a.get("timeout")) * 1000);
            long idle = (long) (Double.parseDouble(a.get("idle-timeout")) * 1000);
            long last = System.currentTimeMillis();
            while (count < expect && System.currentTimeMillis() < deadline && System.currentTimeMillis() - last < idle) {
                List<MessageView> views = consumer.receive(16, Duration.ofSeconds(Long.parseLong(a.get("invisible-s"))));
                for (MessageView view : views) {
                    last = System.currentTimeMillis();
                    received(view);
                    count++;
                    if (a.get("ack").equals("yes")) {
                        consumer.ack(view);
                    }
                }
            }
        }
        return count >= expect;
    }

    static boolean push(ClientServiceProvider provider, ClientConfiguration config, Map<String, String> a)
        throws Exception {
        FilterExpression all = new FilterExpression("*", FilterExpressionType.TAG);
        AtomicInteger count = new AtomicInteger();
        AtomicLong last = new AtomicLong(System.currentTimeMillis());
        int expect = Integer.parseInt(a.get("expect"));
        try (PushConsumer consumer = provider.newPushConsumerBuilder().setClientConfiguration(config)
            .setConsumerGroup(a.get("group")).setSubscriptionExpressions(Collections.singletonMap(a.get("topic"), all))
            .setMessageListener(view -> {
                received(view);
                count.incrementAndGet();
                last.set(System.currentTimeMillis());
                return ConsumeResult.SUCCESS;
            }).build()) {
            long deadline = System.currentTimeMillis() + (long) (Double.parseDouble(a.get("timeout")) * 1000);
            long idle = (long) (Double.parseDouble(a.get("idle-timeout")) * 1000);
            while (count.get() < expect && System.currentTimeMillis() < deadline
                && System.currentTimeMillis() - last.get() < idle) {
                Thread.sleep(100);
            }
        }
        return count.get() >= expect;
    }
}
