'use strict';
// Drive npm `ali-ons@3.12.0` (pure JavaScript RocketMQ client) from the command line.
//
//   node ali_ons.js produce --namesrv 127.0.0.1:9876 --topic T --mode sync|async --messages msgs.json
//   node ali_ons.js push --namesrv 127.0.0.1:9876 --group G --topic T --expression 'TagA' --expect 3
//
// Needs NODE_PATH pointing at the cached node_modules (tests/interop_clients.py sets it).

const { Producer, Consumer, Message } = require('ali-ons');
const common = require('./common');

// ali-ons insists on an HTTP client because it can look name servers up by URL; with `nameSrv` given
// it never does, so any call reaching this one is a configuration mistake worth failing loudly on.
const noHttp = {
  async request(url) {
    throw new Error(`ali-ons tried to fetch ${url}; name server lookups over HTTP are not used here`);
  },
};

// Its default logger prints warnings with console.warn; info and debug lines are already dropped.
const logger = {
  info() {},
  debug() {},
  warn: (...args) => console.error(...args),
  error: (...args) => console.error(...args),
};

// ACL 1.0: with accessKey and secretKey set, ali-ons signs every request (lib/channel.js).
function clientOptions(flags) {
  const credentials = flags['access-key'] === undefined ? {}
    : { accessKey: flags['access-key'], secretKey: flags['secret-key'] };
  return { httpclient: noHttp, nameSrv: flags.namesrv, logger, ...credentials };
}

// ali-ons keeps 64-bit fields as numbers, strings or Long objects depending on the decoder path.
function asNumber(value) {
  return value === null || value === undefined ? null : Number(String(value));
}

async function produce(flags) {
  common.required(flags, 'namesrv', 'topic');
  const producer = new Producer({ ...clientOptions(flags), producerGroup: flags.group || 'PID_INTEROP_ALIONS' });
  await producer.ready();
  try {
    const failures = await common.sendAll(common.loadMessages(flags), flags.mode, async spec => {
      const message = new Message(spec.topic || flags.topic, spec.tags || null, spec.body);
      if (spec.keys) message.keys = spec.keys.split(' ');
      Object.assign(message.properties, spec.properties || {});
      const result = await producer.send(message);
      return {
        status: result.sendStatus,
        msgId: result.msgId,
        queueId: asNumber(result.messageQueue.queueId),
        queueOffset: asNumber(result.queueOffset),
      };
    });
    await common.stayStarted(flags);
    return failures;
  } finally {
    await common.shutdownWithinGrace(() => producer.close());
  }
}

function describe(message) {
  return {
    topic: message.topic,
    tags: message.tags || null,
    keys: message.keys || null,
    body_b64: message.body.toString('base64'),
    bodyExact: true,
    properties: message.properties,
    msgId: message.msgId,
    queueId: message.queueId,
    queueOffset: asNumber(message.queueOffset),
    reconsumeTimes: message.reconsumeTimes,
    commitLogOffset: asNumber(message.commitLogOffset),
    storeSize: message.storeSize,
    bornTimestamp: asNumber(message.bornTimestamp),
    storeTimestamp: asNumber(message.storeTimestamp),
  };
}

async function push(flags) {
  common.required(flags, 'namesrv', 'topic', 'group', 'expect');
  const arrivals = new common.Arrivals(Number(flags.expect), Number(flags['idle-timeout']));
  // A new group starts at the head of each queue, as in the golden capture; the default (last offset)
  // would skip whatever a test produced before the consumer started.
  const consumer = new Consumer({
    ...clientOptions(flags),
    consumerGroup: flags.group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  });
  consumer.on('error', err => common.emit('error', { stage: 'consume', type: err.name, message: err.message }));
  const retryTimes = Number(flags['retry-times']);
  consumer.subscribe(flags.topic, flags.expression, async message => {
    // Redelivered copies come from the group's retry topic with reconsumeTimes counting up.
    const accepted = message.reconsumeTimes >= retryTimes;
    common.received({ accepted, ...describe(message) });
    if (!accepted) return Consumer.ACTION_RETRY;
    // ali-ons advances the queue's offset in the continuation after this handler resolves; counting
    // the message one macrotask later guarantees close() persists an offset past it.
    setImmediate(() => arrivals.record());
  });
  await consumer.ready();
  await arrivals.finished;
  await common.shutdownWithinGrace(() => consumer.close());
  common.emit('done', { received: arrivals.count });
  return arrivals.count >= arrivals.expect ? 0 : 1;
}

common.main({ produce, push }, { mode: 'sync', expression: '*', 'idle-timeout': '20', 'retry-times': '0' },
  { drain: false });
