package rmqspec.drivers;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.RPCHook;

/**
 * Synchronous sends through the release's DefaultMQProducer, for interop tests and load comparisons.
 *
 * <pre>Produce NAMESRV TOPIC THREADS SIZE COUNT SECONDS [ACCESS_KEY SECRET_KEY]</pre>
 *
 * Each of THREADS threads sends SIZE-byte messages until COUNT sends were made in all (0: no limit) or
 * SECONDS have passed since the producer started (0: no limit). Every WINDOW_MS a line
 * "window sent=N failed=N avg_rt_ms=X" is printed, at the end "done sent=N failed=N" and the first
 * failure, if any. With keys, every send is signed by the release's ACL 1.0 client hook (4.x ships it;
 * it is looked up by name so that the driver compiles against any release).
 */
public final class Produce {
    static final long WINDOW_MS = 2000;

    public static void main(String[] args) throws Exception {
        String namesrv = args[0];
        String topic = args[1];
        int threads = Integer.parseInt(args[2]);
        byte[] body = new byte[Integer.parseInt(args[3])];
        long count = Long.parseLong(args[4]);
        long seconds = Long.parseLong(args[5]);
        RPCHook hook = args.length > 7 ? Drivers.aclHook(args[6], args[7]) : null;
        DefaultMQProducer producer = new DefaultMQProducer("rmqspec_produce_" + System.nanoTime(), hook);
        producer.setNamesrvAddr(namesrv);
        producer.setSendMsgTimeout(Drivers.SEND_TIMEOUT_MS);
        producer.start();
        long deadline = seconds == 0 ? Long.MAX_VALUE : System.currentTimeMillis() + seconds * 1000;
        AtomicReference<String> firstFailure = new AtomicReference<>();
        AtomicLong started = new AtomicLong();
        AtomicLong sent = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        AtomicLong rtNanos = new AtomicLong();
        CountDownLatch finished = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            new Thread(() -> {
                try {
                    while (System.currentTimeMillis() < deadline
                        && (count == 0 || started.incrementAndGet() <= count)) {
                        long begin = System.nanoTime();
                        try {
                            SendResult result = producer.send(new Message(topic, body));
                            if (result.getSendStatus() == SendStatus.SEND_OK) {
                                sent.incrementAndGet();
                            } else {
                                failed.incrementAndGet();
                                firstFailure.compareAndSet(null, result.getSendStatus().toString());
                            }
                        } catch (Exception e) {
                            failed.incrementAndGet();
                            firstFailure.compareAndSet(null, e.toString());
                        }
                        rtNanos.addAndGet(System.nanoTime() - begin);
                    }
                } finally {
                    finished.countDown();
                }
            }).start();
        }
        long lastSent = 0;
        long lastRt = 0;
        long lastFailed = 0;
        while (!finished.await(WINDOW_MS, java.util.concurrent.TimeUnit.MILLISECONDS)) {
            long nowSent = sent.get();
            long nowFailed = failed.get();
            long nowRt = rtNanos.get();
            long sends = nowSent + nowFailed - lastSent - lastFailed;
            System.out.printf("window sent=%d failed=%d avg_rt_ms=%.3f%n", nowSent - lastSent,
                nowFailed - lastFailed, sends == 0 ? 0.0 : (nowRt - lastRt) / 1e6 / sends);
            lastSent = nowSent;
            lastFailed = nowFailed;
            lastRt = nowRt;
        }
        System.out.printf("done sent=%d failed=%d%n", sent.get(), failed.get());
        if (firstFailure.get() != null) {
            System.out.println("first failure: " + firstFailure.get());
        }
        producer.shutdown();
    }
}
