package rmqspec.drivers;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Half messages whose fate is decided only when the broker checks them back.
 *
 * <pre>TransactionProduce NAMESRV TOPIC COUNT SECONDS</pre>
 *
 * Sends COUNT half messages with keys KEY0, KEY1, ... whose local transactions all answer UNKNOW. A check
 * of KEYn answers COMMIT_MESSAGE when n % 3 == 1, ROLLBACK_MESSAGE when n % 3 == 2 and UNKNOW otherwise,
 * so the broker delivers KEY1, KEY4, KEY7, ..., drops KEY2, KEY5, ... and gives up on the rest after its
 * transactionCheckMax checks. Prints "checked KEYn state" per check and stays up SECONDS to answer them.
 */
public final class TransactionProduce {
    public static void main(String[] args) throws Exception {
        String namesrv = args[0];
        String topic = args[1];
        int count = Integer.parseInt(args[2]);
        long seconds = Long.parseLong(args[3]);
        ConcurrentHashMap<String, AtomicInteger> checks = new ConcurrentHashMap<>();
        TransactionMQProducer producer = new TransactionMQProducer("rmqspec_transaction_" + System.nanoTime());
        producer.setNamesrvAddr(namesrv);
        producer.setSendMsgTimeout(Drivers.SEND_TIMEOUT_MS);
        producer.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message message, Object argument) {
                return LocalTransactionState.UNKNOW;
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt message) {
                String key = message.getKeys();
                int n = Integer.parseInt(key.substring(3));
                LocalTransactionState state = n % 3 == 1 ? LocalTransactionState.COMMIT_MESSAGE
                    : n % 3 == 2 ? LocalTransactionState.ROLLBACK_MESSAGE : LocalTransactionState.UNKNOW;
                checks.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
                System.out.println("checked " + key + " " + state);
                return state;
            }
        });
        producer.start();
        for (int i = 0; i < count; i++) {
            Message message = new Message(topic, "TagA", "KEY" + i, ("transaction " + i).getBytes("UTF-8"));
            System.out.println("sent KEY" + i + " " + producer.sendMessageInTransaction(message, null).getSendStatus());
        }
        Thread.sleep(seconds * 1000);
        producer.shutdown();
    }
}
