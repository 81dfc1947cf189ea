import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageRequestMode;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * A 5.x Java client round trip over classic remoting: a producer sends plain, batched, ordered (queue
 * chosen by key) and timer messages; an admin switches the consumer group to POP for the topic (what
 * mqadmin setConsumeMode does); a push consumer that asks the broker for its assignment then pops them all.
 * Prints one line per event ("sent <body>", "consumed <body> <reconsumeTimes>", "done") and exits 0 once
 * every message was consumed, 1 on timeout.
 *
 * Arguments: namesrv brokerAddr topic group timeoutSeconds
 */
public class PopRoundTrip {
    /** Generous: the machines running the tests are shared and a JVM's first send warms up slowly. */
    private static final int SEND_TIMEOUT_MS = 20_000;

    public static void main(String[] args) {
        try {
            roundTrip(args);
        } catch (Throwable failure) {
            failure.printStackTrace();
            System.exit(2);
        }
    }

    private static void roundTrip(String[] args) throws Exception {
        String namesrv = args[0], broker = args[1], topic = args[2], group = args[3];
        long timeoutMs = Long.parseLong(args[4]) * 1000;
        List<String> sent = new ArrayList<>();

        DefaultMQProducer producer = new DefaultMQProducer(group + "_producer");
        producer.setNamesrvAddr(namesrv);
        producer.setSendMsgTimeout(SEND_TIMEOUT_MS);
        producer.start();
        for (int i = 0; i < 4; i++) {
            sent.add(send(producer, new Message(topic, "plain", ("plain-" + i).getBytes(StandardCharsets.UTF_8))));
        }
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            batch.add(new Message(topic, "batch", ("batch-" + i).getBytes(StandardCharsets.UTF_8)));
        }
        SendResult batchResult = producer.send(batch);
        System.out.println("sent batch " + batchResult.getSendStatus());
        for (int i = 0; i < 3; i++) {
            sent.add("batch-" + i);
        }
        Message ordered = new Message(topic, "ordered", ("ordered-0").getBytes(StandardCharsets.UTF_8));
        SendResult orderedResult = producer.send(ordered, (queues, msg, key) -> queues.get(0), "key");
        System.out.println("sent ordered-0 " + orderedResult.getSendStatus());
        sent.add("ordered-0");
        Message timer = new Message(topic, "timer", "timer-0".getBytes(StandardCharsets.UTF_8));
        timer.setDeliverTimeMs(System.currentTimeMillis() + 2000);
        sent.add(send(producer, timer));
        producer.shutdown();

        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(namesrv);
        admin.start();
        admin.setMessageRequestMode(broker, topic, group, MessageRequestMode.POP, 0, 5000);
        admin.shutdown();
        System.out.println("mode POP");

        Set<String> consumed = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
        consumer.setNamesrvAddr(namesrv);
        consumer.setClientRebalance(false);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (messages, context) -> {
            for (MessageExt message : messages) {
                String body = new String(message.getBody(), StandardCharsets.UTF_8);
                consumed.add(body);
                System.out.println("consumed " + body + " " + message.getReconsumeTimes() + " "
                    + (message.getProperty("POP_CK") != null ? "popck" : "noack"));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (!consumed.containsAll(sent) && System.currentTimeMillis() < deadline) {
            TimeUnit.MILLISECONDS.sleep(200);
        }
        consumer.shutdown();
        boolean done = consumed.containsAll(sent);
        System.out.println(done ? "done" : "missing " + sent.stream().filter(b -> !consumed.contains(b)).toList());
        System.exit(done ? 0 : 1);
    }

    private static String send(DefaultMQProducer producer, Message message) throws Exception {
        SendResult result = producer.send(message);
        String body = new String(message.getBody(), StandardCharsets.UTF_8);
        System.out.println("sent " + body + " " + result.getSendStatus());
        return body;
    }
}
