package rmqspec.drivers;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;

/**
 * A push consumer of the release's client that consumes a topic from its first offset.
 *
 * <pre>Consume NAMESRV TOPIC GROUP SECONDS</pre>
 *
 * Prints "consumed N" every second and runs SECONDS (its offsets are committed as it goes).
 */
public final class Consume {
    public static void main(String[] args) throws Exception {
        AtomicLong consumed = new AtomicLong();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(args[2]);
        consumer.setNamesrvAddr(args[0]);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(args[1], "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (messages, context) -> {
            consumed.addAndGet(messages.size());
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        long deadline = System.currentTimeMillis() + Long.parseLong(args[3]) * 1000;
        while (System.currentTimeMillis() < deadline) {
            Thread.sleep(1000);
            System.out.println("consumed " + consumed.get());
        }
        consumer.shutdown();
    }
}
