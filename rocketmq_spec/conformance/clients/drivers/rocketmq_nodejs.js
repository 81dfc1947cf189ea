'use strict';
// Drive npm `rocketmq-nodejs@1.1.2` (prebuilt addon around the Apache RocketMQ C++ client 2.x).
//
//   node rocketmq_nodejs.js produce --namesrv 127.0.0.1:9876 --topic T --mode sync|async --messages m.json
//   node rocketmq_nodejs.js push --namesrv 127.0.0.1:9876 --group G --topic T --expression 'TagA' --expect 3
//
// Needs NODE_PATH pointing at the cached node_modules (tests/interop_clients.py sets it).  The addon's
// send takes only tags and keys, so user properties in a message file are reported as unsupported.

const { Producer, PushConsumer } = require('rocketmq-nodejs');
const common = require('./common');

// The C++ client logs every request at INFO; WARN keeps its files small but still explains failures.
// Files go to `--log-dir` (default: $HOME/logs/rocketmq-cpp, as the C++ client would choose).
function clientOptions(flags) {
  const options = { nameServer: flags.namesrv, logLevel: 'warn' };
  if (flags['log-dir']) options.logDir = flags['log-dir'];
  return options;
}

async function produce(flags) {
  common.required(flags, 'namesrv', 'topic');
  const specs = common.loadMessages(flags);
  const unsupported = specs.findIndex(spec => spec.topic || Object.keys(spec.properties || {}).length);
  if (unsupported >= 0) {
    throw new Error(`message ${unsupported}: this client can set only tags and keys (no topic override or properties)`);
  }
  const producer = new Producer(flags.group || 'PID_INTEROP_NODEJS', clientOptions(flags));
  await producer.start();
  try {
    const failures = await common.sendAll(specs, flags.mode, async spec => {
      const options = {};
      if (spec.tags) options.tags = spec.tags;
      if (spec.keys) options.keys = spec.keys;
      const result = await producer.send(flags.topic, spec.body, options);
      // The addon resolves (rather than rejects) when the C++ client refuses a message, e.g. EMPTY_BODY.
      if (!(result.status in Producer.SEND_RESULT)) {
        throw new Error(`send refused by the client: ${result.statusStr} (status ${result.status})`);
      }
      // The addon reports no queue id; `offset` is the queue offset from the broker's answer.
      return { status: result.statusStr, msgId: result.msgId, queueId: null, queueOffset: result.offset };
    });
    await common.stayStarted(flags);
    return failures;
  } finally {
    await common.shutdownWithinGrace(() => producer.shutdown());
  }
}

// The addon hands over topic, tags, keys, msgId and body only; the body as base64 like the others.
function describe(message) {
  const { body, ...fields } = message;
  const exact = Buffer.isBuffer(body);
  return {
    ...fields,
    tags: fields.tags || null,
    keys: fields.keys || null,
    // A string body has been through UTF-8 decoding inside the addon: bytes that are not UTF-8 are lost.
    body_b64: (exact ? body : Buffer.from(body || '', 'utf8')).toString('base64'),
    bodyExact: exact,
  };
}

async function push(flags) {
  common.required(flags, 'namesrv', 'topic', 'group', 'expect');
  const arrivals = new common.Arrivals(Number(flags.expect), Number(flags['idle-timeout']));
  const consumer = new PushConsumer(flags.group, { ...clientOptions(flags), threadCount: 1 });
  consumer.on('error', err => common.emit('error', { stage: 'consume', type: err.name, message: err.message }));
  // The addon reports no reconsumeTimes; deliveries are counted per msgId (the UNIQ_KEY, which
  // redelivered copies keep).
  const retryTimes = Number(flags['retry-times']);
  const deliveries = new Map();
  consumer.on('message', (message, ack) => {
    const seen = deliveries.get(message.msgId) || 0;
    deliveries.set(message.msgId, seen + 1);
    const accepted = seen >= retryTimes;
    common.received({ accepted, ...describe(message) });
    ack.done(accepted);
    if (accepted) arrivals.record();
  });
  consumer.subscribe(flags.topic, flags.expression);
  await consumer.start();
  await arrivals.finished;
  await common.settle();
  await common.shutdownWithinGrace(() => consumer.shutdown());
  common.emit('done', { received: arrivals.count });
  return arrivals.count >= arrivals.expect ? 0 : 1;
}

common.main({ produce, push }, { mode: 'sync', expression: '*', 'idle-timeout': '20', 'retry-times': '0' },
  { drain: true });
