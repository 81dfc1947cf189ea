import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * The 5.x Java client's producers and consumers that need no POP, over classic remoting: a producer sends
 * plain messages; a transaction producer sends three half messages whose local transactions commit
 * ("tx-commit"), roll back ("tx-rollback") and stay undecided ("tx-unknown", committed when the broker
 * checks it back); then a push consumer in its default pull mode and a lite pull consumer (subscribe mode,
 * whose pulls are LITE_PULL_MESSAGE) each consume the topic from its first offset. Prints one line per
 * event ("sent <body>", "checked <body>", "push <body>", "lite <body>", then "push [..]" / "lite [..]" with
 * what each consumer got, and "done"); exits 0 when both consumers got exactly the plain and committed
 * messages and the undecided one was checked back, 1 otherwise.
 *
 * Arguments: namesrv topic group timeoutSeconds
 */
public class ConsumersRoundTrip {
    /** Generous: the machines running the tests are shared and a JVM's first send warms up slowly. */
    private static final int SEND_TIMEOUT_MS = 20_000;
    private static final int PLAIN = 4;
    /** How long the consumers keep reading after they have everything: a rolled back message must not come. */
    private static final long SETTLE_MS = 2_000;

    public static void main(String[] args) {
        try {
            System.exit(roundTrip(args) ? 0 : 1);
        } catch (Throwable failure) {
            failure.printStackTrace();
            System.exit(2);
        }
    }

    private static boolean roundTrip(String[] args) throws Exception {
        String namesrv = args[0], topic = args[1], group = args[2];
        long timeoutMs = Long.parseLong(args[3]) * 1000;
        Set<String> expected = new TreeSet<>();

        DefaultMQProducer producer = new DefaultMQProducer(group + "_producer");
        producer.setNamesrvAddr(namesrv);
        producer.setSendMsgTimeout(SEND_TIMEOUT_MS);
        producer.start();
        for (int i = 0; i < PLAIN; i++) {
            expected.add(send(producer, topic, "plain-" + i));
        }
        producer.shutdown();

        Set<String> checked = ConcurrentHashMap.newKeySet();
        TransactionMQProducer transactions = new TransactionMQProducer(group + "_tx");
        transactions.setNamesrvAddr(namesrv);
        transactions.setSendMsgTimeout(SEND_TIMEOUT_MS);
        transactions.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message message, Object argument) {
                switch (body(message)) {
                    case "tx-commit": return LocalTransactionState.COMMIT_MESSAGE;
                    case "tx-rollback": return LocalTransactionState.ROLLBACK_MESSAGE;
                    default: return LocalTransactionState.UNKNOW;
                }
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt message) {
                String body = body(message);
                if (checked.add(body)) {
                    System.out.println("checked " + body);
                }
                return body.equals("tx-unknown") ? LocalTransactionState.COMMIT_MESSAGE
                    : LocalTransactionState.ROLLBACK_MESSAGE;
            }
        });
        transactions.start();
        for (String body : new String[] {"tx-commit", "tx-rollback", "tx-unknown"}) {
            TransactionSendResult result = transactions.sendMessageInTransaction(
                new Message(topic, "tx", body.getBytes(StandardCharsets.UTF_8)), null);
            System.out.println("sent " + body + " " + result.getSendStatus() + " " + result.getLocalTransactionState());
        }
        expected.add("tx-commit");
        expected.add("tx-unknown");

        Set<String> pushed = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer push = new DefaultMQPushConsumer(group + "_push");
        push.setNamesrvAddr(namesrv);
        push.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        push.subscribe(topic, "*");
        push.registerMessageListener((MessageListenerConcurrently) (messages, context) -> {
            for (MessageExt message : messages) {
                pushed.add(body(message));
                System.out.println("push " + body(message));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        push.start();

        Set<String> polled = new TreeSet<>();
        DefaultLitePullConsumer lite = new DefaultLitePullConsumer(group + "_lite");
        lite.setNamesrvAddr(namesrv);
        lite.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        lite.subscribe(topic, "*");
        lite.start();

        long deadline = System.currentTimeMillis() + timeoutMs;
        long settled = Long.MAX_VALUE;
        while (System.currentTimeMillis() < Math.min(deadline, settled)) {
            List<MessageExt> messages = lite.poll(500);
            for (MessageExt message : messages) {
                polled.add(body(message));
                System.out.println("lite " + body(message));
            }
            if (settled == Long.MAX_VALUE && polled.containsAll(expected) && pushed.containsAll(expected)) {
                settled = System.currentTimeMillis() + SETTLE_MS;
            }
        }
        lite.shutdown();
        push.shutdown();
        transactions.shutdown();
        Set<String> pushedNow = new TreeSet<>(pushed);
        System.out.println("push " + pushedNow);
        System.out.println("lite " + polled);
        boolean done = pushedNow.equals(expected) && polled.equals(expected) && checked.contains("tx-unknown");
        System.out.println(done ? "done" : "expected " + expected + " checked " + checked);
        return done;
    }

    private static String send(DefaultMQProducer producer, String topic, String body) throws Exception {
        SendResult result = producer.send(new Message(topic, "plain", body.getBytes(StandardCharsets.UTF_8)));
        System.out.println("sent " + body + " " + result.getSendStatus());
        return body;
    }

    private static String body(Message message) {
        return new String(message.getBody(), StandardCharsets.UTF_8);
    }
}
