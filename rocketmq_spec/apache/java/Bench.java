package rmqspec.drivers;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * The load of the benchmark matrix (benchmarks/matrix.py), the same program for every broker: synchronous
 * sends, then pulls of what was sent, through the release's client, timing every call.
 *
 * <pre>Bench NAMESRV TOPIC SIZE WARMUP SECONDS THREADS...</pre>
 *
 * For each thread count in turn, THREADS threads send SIZE-byte messages synchronously; then, for each thread
 * count, THREADS threads pull the topic's queues (thread t reads queue t modulo the queue count from offset
 * 0, 32 messages a request, starting over at the end). Each phase runs WARMUP seconds that are not counted
 * (JIT, connections, route lookups), then SECONDS that are. Lines, in order:
 * "warmup mode=send|pull threads=N" when a phase starts, "measure mode=.. threads=N" when its counted part
 * starts, "sample mode=.. threads=N second=I ops=N messages=N" at the end of each counted second (what was
 * completed in it, so the reader can take the median of per-second rates), and at the end "phase mode=..
 * threads=N ops=N messages=N seconds=S p50_ms=X p99_ms=X failed=N", where ops are calls (a pull is one
 * call of up to 32 messages) and messages what they carried.
 */
public final class Bench {
    private static final int PULL_BATCH = 32;

    private Bench() {
    }

    /** One thread's timed calls after the warm-up. */
    private static final class Tally {
        long[] nanos = new long[1 << 14];
        int count;
        long messages;
        long failed;

        void add(long elapsed, long carried) {
            if (count == nanos.length) {
                nanos = Arrays.copyOf(nanos, count * 2);
            }
            nanos[count++] = elapsed;
            messages += carried;
        }
    }

    interface Call {
        /** One call of thread ``thread``; returns the messages it carried, or -1 for a failed call. */
        long run(int thread) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        String namesrv = args[0];
        String topic = args[1];
        byte[] body = new byte[Integer.parseInt(args[2])];
        long warmup = Long.parseLong(args[3]);
        long seconds = Long.parseLong(args[4]);
        int[] threadCounts = Arrays.stream(args, 5, args.length).mapToInt(Integer::parseInt).toArray();

        DefaultMQProducer producer = new DefaultMQProducer("rmqspec_bench_producer");
        producer.setNamesrvAddr(namesrv);
        producer.setSendMsgTimeout(Drivers.SEND_TIMEOUT_MS);
        producer.start();
        for (int threads : threadCounts) {
            phase("send", threads, warmup, seconds, thread -> {
                Message message = new Message(topic, body);
                return producer.send(message).getSendStatus() == SendStatus.SEND_OK ? 1 : -1;
            });
        }
        producer.shutdown();

        DefaultMQPullConsumer consumer = new DefaultMQPullConsumer("rmqspec_bench_consumer");
        consumer.setNamesrvAddr(namesrv);
        consumer.start();
        List<MessageQueue> queues = new ArrayList<>(consumer.fetchSubscribeMessageQueues(topic));
        queues.sort(null);
        for (int threads : threadCounts) {
            long[] offsets = new long[threads];
            phase("pull", threads, warmup, seconds, thread -> {
                MessageQueue queue = queues.get(thread % queues.size());
                PullResult result = consumer.pull(queue, "*", offsets[thread], PULL_BATCH);
                if (result.getPullStatus() == PullStatus.FOUND) {
                    offsets[thread] = result.getNextBeginOffset();
                    return result.getMsgFoundList().size();
                }
                offsets[thread] = 0;  // the end of the queue: read it again from the start
                return result.getPullStatus() == PullStatus.OFFSET_ILLEGAL ? -1 : 0;
            });
        }
        consumer.shutdown();
    }

    private static void phase(String mode, int threads, long warmup, long seconds, Call call)
            throws InterruptedException {
        System.out.printf("warmup mode=%s threads=%d%n", mode, threads);
        System.out.flush();
        long start = System.nanoTime();
        long warm = start + warmup * 1_000_000_000L;
        long end = warm + seconds * 1_000_000_000L;
        Tally[] tallies = new Tally[threads];
        LongAdder countedOps = new LongAdder();
        LongAdder countedMessages = new LongAdder();
        CountDownLatch finished = new CountDownLatch(threads);
        AtomicLong lastEnd = new AtomicLong();
        for (int t = 0; t < threads; t++) {
            Tally tally = tallies[t] = new Tally();
            int thread = t;
            new Thread(() -> {
                try {
                    long now = System.nanoTime();
                    while (now < end) {
                        long begin = now;
                        long carried;
                        try {
                            carried = call.run(thread);
                        } catch (Exception e) {
                            carried = -1;
                        }
                        now = System.nanoTime();
                        if (begin >= warm) {
                            if (carried < 0) {
                                tally.failed++;
                            } else {
                                tally.add(now - begin, carried);
                                countedOps.increment();
                                countedMessages.add(carried);
                            }
                        }
                    }
                    lastEnd.accumulateAndGet(now, Math::max);
                } finally {
                    finished.countDown();
                }
            }).start();
        }
        sleepUntil(warm);
        System.out.printf("measure mode=%s threads=%d%n", mode, threads);
        System.out.flush();
        long sampledOps = 0;
        long sampledMessages = 0;
        for (int second = 1; second <= seconds; second++) {
            sleepUntil(warm + second * 1_000_000_000L);
            long opsNow = countedOps.sum();
            long messagesNow = countedMessages.sum();
            System.out.printf("sample mode=%s threads=%d second=%d ops=%d messages=%d%n", mode, threads, second,
                opsNow - sampledOps, messagesNow - sampledMessages);
            System.out.flush();
            sampledOps = opsNow;
            sampledMessages = messagesNow;
        }
        finished.await();
        int total = 0;
        long messages = 0;
        long failed = 0;
        for (Tally tally : tallies) {
            total += tally.count;
            messages += tally.messages;
            failed += tally.failed;
        }
        long[] all = new long[total];
        int at = 0;
        for (Tally tally : tallies) {
            System.arraycopy(tally.nanos, 0, all, at, tally.count);
            at += tally.count;
        }
        Arrays.sort(all);
        double measured = (lastEnd.get() - warm) / 1e9;
        System.out.printf("phase mode=%s threads=%d ops=%d messages=%d seconds=%.3f p50_ms=%.3f p99_ms=%.3f "
            + "failed=%d%n", mode, threads, total, messages, measured, percentile(all, 0.50),
            percentile(all, 0.99), failed);
        System.out.flush();
    }

    private static void sleepUntil(long deadline) throws InterruptedException {
        for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
            Thread.sleep(left / 1_000_000L, (int) (left % 1_000_000L));
        }
    }

    private static double percentile(long[] sorted, double fraction) {
        if (sorted.length == 0) {
            return 0.0;
        }
        return sorted[Math.min(sorted.length - 1, (int) (sorted.length * fraction))] / 1e6;
    }
}
