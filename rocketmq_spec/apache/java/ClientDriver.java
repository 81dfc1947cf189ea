package rmqspec.drivers;

import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.serializer.SerializerFeature;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.client.producer.selector.SelectMessageQueueByHash;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageClientIDSetter;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.RPCHook;

/**
 * A driver of the client conformance suite (``rmq-conformance client``) for the release's remoting client.
 *
 * <pre>ClientDriver SCENARIO</pre>
 *
 * The environment the suite sets, the scenarios, the JSON events on stdout and the exit statuses are the
 * suite's driver contract (rocketmq_spec.conformance.clients.driver): RMQ_NAMESRV, RMQ_TOPIC, RMQ_GROUP,
 * RMQ_COUNT and the rest. What is judged is the client's behaviour with its DEFAULT settings, so the driver
 * sets only the name server address and what a scenario needs (a transaction listener, a delay level, a
 * queue selector); timeouts, retries, heartbeat and persist intervals stay the release's own. A failure the
 * client raises (a start that fails, a send given up after its retries) is an "error" event, not an exit
 * status. A transaction whose local answer is "unknown" keeps the producer up until a check-back settles it
 * or the budget (RMQ_TIMEOUT_S less a shutdown margin) ends.
 *
 * Events are written with the fastjson 1.x that both 4.x and 5.x clients carry on their class path, to the
 * process's original stdout; System.out is pointed at stderr so that nothing a client library prints can
 * corrupt the event stream. A FIFO message's sharding key is g(index % RMQ_MESSAGE_GROUPS), given to the
 * client's own SelectMessageQueueByHash. Pop (consume-pop) is the 5.x push consumer with clientRebalance
 * off, found by reflection; a release without it (4.x) answers "unsupported".
 */
public final class ClientDriver {
    static final int UNSUPPORTED = 3;
    /** The budget kept for a client's shutdown (unregistration, offset commits) before the suite's deadline. */
    static final long SHUTDOWN_MARGIN_MS = 5000;

    private static final PrintStream EVENTS = new PrintStream(new FileOutputStream(FileDescriptor.out), true);

    private final Map<String, String> env = System.getenv();
    private final String topic = required("RMQ_TOPIC");
    private final String group = env.getOrDefault("RMQ_GROUP", "rmqspec_driver");
    private final int count = Integer.parseInt(env.getOrDefault("RMQ_COUNT", "1"));
    private final long deadline;
    private final RPCHook hook;

    private ClientDriver() throws ReflectiveOperationException {
        long budgetMs = (long) (Double.parseDouble(env.getOrDefault("RMQ_TIMEOUT_S", "60")) * 1000);
        deadline = System.currentTimeMillis() + Math.max(budgetMs - SHUTDOWN_MARGIN_MS, budgetMs / 2);
        String accessKey = env.get("RMQ_ACCESS_KEY");
        hook = accessKey == null || accessKey.isEmpty() ? null : Drivers.aclHook(accessKey, env.get("RMQ_SECRET_KEY"));
    }

    public static void main(String[] args) throws Exception {
        System.setOut(System.err);
        String scenario = args.length > 0 ? args[0] : "";
        String protocol = System.getenv().getOrDefault("RMQ_PROTOCOL", "remoting");
        if (!protocol.equals("remoting")) {
            unsupported("a remoting client does not speak " + protocol);
        }
        ClientDriver driver = new ClientDriver();
        try {
            switch (scenario) {
                case "produce": driver.produce(Mode.SYNC); break;
                case "produce-async": driver.produce(Mode.ASYNC); break;
                case "produce-oneway": driver.produce(Mode.ONEWAY); break;
                case "produce-delay": driver.produce(Mode.DELAY); break;
                case "produce-fifo": driver.produce(Mode.FIFO); break;
                case "produce-batch": driver.produceBatch(); break;
                case "produce-transaction": driver.produceTransaction(); break;
                case "consume-push": driver.consumePush(false); break;
                case "consume-pop": driver.consumePush(true); break;
                case "consume-pull": driver.consumePull(); break;
                case "idle": driver.idle(driver.idleMs()); break;
                case "shutdown": driver.idle(0); break;
                default: unsupported("scenario " + scenario + " is not implemented by the Java remoting driver");
            }
        } catch (Exception e) {  // what the client raised (a failed start, say) is an event
            emit(error(scenario, e));
        }
        emit(event("done"));
        System.exit(0);  // the client's scheduler threads are not daemons
    }

    enum Mode { SYNC, ASYNC, ONEWAY, DELAY, FIFO }

    private void produce(Mode mode) throws Exception {
        DefaultMQProducer producer = producer(new DefaultMQProducer(group, hook));
        int groups = Integer.parseInt(env.getOrDefault("RMQ_MESSAGE_GROUPS", "2"));
        CountDownLatch acknowledged = new CountDownLatch(mode == Mode.ASYNC ? count : 0);
        for (int i = 0; i < count && System.currentTimeMillis() < deadline; i++) {
            Message message = message(i);
            int index = i;
            try {
                switch (mode) {
                    case ASYNC:
                        producer.send(message, new SendCallback() {
                            @Override
                            public void onSuccess(SendResult result) {
                                emit(sent(index, result.getMsgId(), result));
                                acknowledged.countDown();
                            }

                            @Override
                            public void onException(Throwable e) {
                                emit(error("send", e));
                                acknowledged.countDown();
                            }
                        });
                        break;
                    case ONEWAY:
                        producer.sendOneway(message);  // no answer: the id is the one the client put on the message
                        emit(sent(index, MessageClientIDSetter.getUniqID(message), null));
                        break;
                    case DELAY:
                        message.setDelayTimeLevel(Integer.parseInt(required("RMQ_DELAY_LEVEL")));
                        emit(sent(index, producer.send(message)));
                        break;
                    case FIFO:
                        String key = "g" + (i % groups);
                        emit(sent(index, producer.send(message, new SelectMessageQueueByHash(), key)).fluentPut("group", key));
                        break;
                    default:
                        emit(sent(index, producer.send(message)));
                }
            } catch (Exception e) {
                emit(error("send", e));
                acknowledged.countDown();
            }
        }
        acknowledged.await(Math.max(0, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
        stayStarted(idleMs());
        producer.shutdown();
    }

    /** RMQ_IDLE_S in ms (0 when absent): how long a producer stays started after its sends, or idle lasts. */
    private long idleMs() {
        return (long) (Double.parseDouble(env.getOrDefault("RMQ_IDLE_S", "0")) * 1000);
    }

    /**
     * Keeps the client started for {@code ms} within the budget: a producer heartbeats only to brokers a route gave
     * it, which its first send fetches, so its heartbeats come from the schedule after the sends.
     */
    private void stayStarted(long ms) throws InterruptedException {
        Thread.sleep(Math.max(0, Math.min(ms, deadline - System.currentTimeMillis())));
    }

    private void produceBatch() throws Exception {
        DefaultMQProducer producer = producer(new DefaultMQProducer(group, hook));
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            batch.add(message(i));
        }
        try {
            SendResult result = producer.send(batch);
            String[] ids = result.getMsgId() == null ? new String[0] : result.getMsgId().split(",");
            for (int i = 0; i < count; i++) {
                emit(sent(i, i < ids.length ? ids[i] : null, result));
            }
        } catch (Exception e) {
            emit(error("send", e));
        }
        producer.shutdown();
    }

    /** Local transactions answer RMQ_TX_ANSWER; check-backs answer RMQ_TX_CHECK_ANSWER. While some message's
     * fate is open (its local answer was unknown and no check has settled it) the producer stays up to be
     * checked, until the budget ends. */
    private void produceTransaction() throws Exception {
        LocalTransactionState answer = state(env.getOrDefault("RMQ_TX_ANSWER", "commit"));
        String checkName = env.getOrDefault("RMQ_TX_CHECK_ANSWER", "commit");
        LocalTransactionState checkAnswer = state(checkName);
        Set<String> open = ConcurrentHashMap.newKeySet();
        TransactionMQProducer producer = new TransactionMQProducer(group, hook);
        producer.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message message, Object argument) {
                if (answer == LocalTransactionState.UNKNOW) {
                    open.add(MessageClientIDSetter.getUniqID(message));
                }
                return answer;
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt message) {
                String id = MessageClientIDSetter.getUniqID(message);
                emit(event("checked").fluentPut("msgId", id).fluentPut("answer", checkName));
                if (checkAnswer != LocalTransactionState.UNKNOW) {
                    open.remove(id);
                }
                return checkAnswer;
            }
        });
        producer(producer);
        for (int i = 0; i < count && System.currentTimeMillis() < deadline; i++) {
            try {
                TransactionSendResult result = producer.sendMessageInTransaction(message(i), null);
                emit(sent(i, result).fluentPut("localTransactionState", String.valueOf(result.getLocalTransactionState())));
            } catch (Exception e) {
                emit(error("send", e));
            }
        }
        while (!open.isEmpty() && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        producer.shutdown();
    }

    private void consumePush(boolean pop) throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group, hook, new AllocateMessageQueueAveragely());
        consumer.setNamesrvAddr(required("RMQ_NAMESRV"));
        if (pop) {
            Method clientRebalance;
            try {
                clientRebalance = DefaultMQPushConsumer.class.getMethod("setClientRebalance", boolean.class);
            } catch (NoSuchMethodException e) {
                unsupported("this release's push consumer has no pop mode (DefaultMQPushConsumer.setClientRebalance)");
                return;
            }
            clientRebalance.invoke(consumer, false);
        }
        CountDownLatch enough = new CountDownLatch(count);
        consumer.subscribe(topic, env.getOrDefault("RMQ_TAG", "*"));
        consumer.registerMessageListener((MessageListenerConcurrently) (messages, context) -> {
            for (MessageExt message : messages) {
                emit(received(message));
                enough.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        emit(event("ready"));
        enough.await(Math.max(0, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
        consumer.shutdown();
    }

    private void consumePull() throws Exception {
        DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(group, hook);
        consumer.setNamesrvAddr(required("RMQ_NAMESRV"));
        consumer.subscribe(topic, env.getOrDefault("RMQ_TAG", "*"));
        consumer.start();
        emit(event("ready"));
        int received = 0;
        while (received < count && System.currentTimeMillis() < deadline) {
            for (MessageExt message : consumer.poll(Math.min(1000, Math.max(1, deadline - System.currentTimeMillis())))) {
                emit(received(message));
                received++;
            }
        }
        consumer.shutdown();
    }

    /** One producer and one push consumer of the topic, started, left alone for ``idleMs`` and shut down. */
    private void idle(long idleMs) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer(group, hook);
        producer.setNamesrvAddr(required("RMQ_NAMESRV"));
        producer.start();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group, hook, new AllocateMessageQueueAveragely());
        consumer.setNamesrvAddr(required("RMQ_NAMESRV"));
        consumer.subscribe(topic, env.getOrDefault("RMQ_TAG", "*"));
        consumer.registerMessageListener((MessageListenerConcurrently) (messages, context) -> {
            messages.forEach(message -> emit(received(message)));
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        emit(event("ready"));
        stayStarted(idleMs);
        consumer.shutdown();
        producer.shutdown();
    }

    private <P extends DefaultMQProducer> P producer(P producer) throws Exception {
        producer.setNamesrvAddr(required("RMQ_NAMESRV"));
        producer.start();
        emit(event("ready"));
        return producer;
    }

    private Message message(int index) {
        Message message = new Message(topic, body(index));
        String tag = env.get("RMQ_TAG");
        if (tag != null && !tag.isEmpty()) {
            message.setTags(tag);
        }
        String keys = env.get("RMQ_KEYS");
        if (keys != null && !keys.isEmpty()) {
            message.setKeys(keys);  // Message keeps them space-separated, as the contract gives them
        }
        return message;
    }

    /** RMQ_BODY_B64 when set, else the index in decimal and a dash, padded with 'x' to RMQ_BODY_SIZE. */
    private byte[] body(int index) {
        String exact = env.get("RMQ_BODY_B64");
        if (exact != null && !exact.isEmpty()) {
            return Base64.getDecoder().decode(exact);
        }
        StringBuilder text = new StringBuilder().append(index).append('-');
        int size = Integer.parseInt(env.getOrDefault("RMQ_BODY_SIZE", "16"));
        while (text.length() < size) {
            text.append('x');
        }
        return text.toString().getBytes(StandardCharsets.US_ASCII);
    }

    private static LocalTransactionState state(String answer) {
        switch (answer) {
            case "commit": return LocalTransactionState.COMMIT_MESSAGE;
            case "rollback": return LocalTransactionState.ROLLBACK_MESSAGE;
            case "unknown": return LocalTransactionState.UNKNOW;
            default: throw new IllegalArgumentException("a transaction answer is commit, rollback or unknown, not " + answer);
        }
    }

    private String required(String name) {
        String value = env.get(name);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException(name + " is not set");
        }
        return value;
    }

    static Event event(String name) {
        return new Event().fluentPut("event", name);
    }

    static Event sent(int index, SendResult result) {
        return sent(index, result.getMsgId(), result);
    }

    static Event sent(int index, String msgId, SendResult result) {
        Event event = event("sent").fluentPut("index", index).fluentPut("msgId", msgId)
            .fluentPut("status", result == null ? null : String.valueOf(result.getSendStatus()));
        if (result != null && result.getMessageQueue() != null) {
            event.fluentPut("queueId", result.getMessageQueue().getQueueId());
        }
        return event;
    }

    static Event received(MessageExt message) {
        return event("received").fluentPut("msgId", message.getMsgId()).fluentPut("topic", message.getTopic())
            .fluentPut("body_b64", Base64.getEncoder().encodeToString(message.getBody()))
            .fluentPut("reconsumeTimes", message.getReconsumeTimes()).fluentPut("queueId", message.getQueueId())
            .fluentPut("queueOffset", message.getQueueOffset()).fluentPut("tag", message.getTags())
            .fluentPut("keys", message.getKeys());
    }

    static Event error(String stage, Throwable e) {
        return event("error").fluentPut("stage", stage).fluentPut("message", e.toString());
    }

    static void emit(Event event) {
        String line = JSON.toJSONString(event, SerializerFeature.WriteMapNullValue);
        synchronized (EVENTS) {
            EVENTS.println(line);
        }
    }

    static void unsupported(String reason) {
        emit(event("unsupported").fluentPut("reason", reason));
        System.exit(UNSUPPORTED);
    }

    /** One event: its fields in the order they were put. */
    static final class Event extends LinkedHashMap<String, Object> {
        Event fluentPut(String key, Object value) {
            put(key, value);
            return this;
        }
    }
}
