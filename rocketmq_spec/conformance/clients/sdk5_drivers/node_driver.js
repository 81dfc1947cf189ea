// Drives npm `rocketmq-client-nodejs` (Apache RocketMQ's 5.x Node.js SDK, gRPC) as a client-suite driver:
//   node node_driver.js SCENARIO      (configuration in RMQ_* variables; see README.md beside it)
// with the same scenarios and JSON events as py_driver.py. The SDK keeps its default settings: only the
// endpoint, credentials, TLS (its `sslEnabled`, off by default, on when RMQ_TLS=1) and what a scenario needs
// are set. Run with NODE_PATH holding the installed SDK (`... sdk5 run node SCENARIO` does that).
'use strict';

const { Producer, SimpleConsumer, PushConsumer, ConsumeResult } = require('rocketmq-client-nodejs');
const { TransactionResolution } = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/definition_pb');

const out = process.stdout;
console.log = console.error; // the SDK's prints go to stderr; stdout carries events only
console.info = console.error;

const env = process.env;
const UNSUPPORTED = 3;
const SHUTDOWN_MARGIN_MS = 5000;
const RECEIVE_INVISIBLE_MS = 15000; // the SDK's own default invisible duration of a receive
const NACK_INVISIBLE_MS = 5000; // consume-nack: a first delivery's new invisible duration
const EXTEND_INVISIBLE_MS = 30000; // consume-extend: each delivery's new invisible duration before its ack
const BATCH = 16;
const RESOLUTIONS = { commit: TransactionResolution.COMMIT, rollback: TransactionResolution.ROLLBACK,
  unknown: TransactionResolution.TRANSACTION_RESOLUTION_UNSPECIFIED };

function emit(event, fields) {
  out.write(JSON.stringify({ event, ...fields }) + '\n');
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
const count = () => Number(env.RMQ_COUNT || 1);

function deadline() {
  const total = Number(env.RMQ_TIMEOUT_S || 60) * 1000;
  return Date.now() + Math.max(total - SHUTDOWN_MARGIN_MS, total / 2);
}

function options() {
  const base = { endpoints: env.RMQ_ENDPOINT, sslEnabled: env.RMQ_TLS === '1' };
  if (env.RMQ_ACCESS_KEY) {
    base.sessionCredentials = { accessKey: env.RMQ_ACCESS_KEY, accessSecret: env.RMQ_SECRET_KEY || '' };
  }
  return base;
}

function subscriptions() {
  return new Map([[ env.RMQ_TOPIC, env.RMQ_TAG || '*' ]]);
}

function received(view) {
  emit('received', { msgId: view.messageId, topic: view.topic, body_b64: view.body.toString('base64'),
    reconsumeTimes: (view.deliveryAttempt || 1) - 1, tag: view.tag || null, keys: [ ...(view.keys || []) ].sort(),
    group: view.messageGroup || null,
    deliveryTimestamp: view.deliveryTimestamp ? view.deliveryTimestamp.getTime() : null, at: Date.now() });
}

// RMQ_BODY_B64 when set, else the index in decimal and a dash, padded with 'x' to RMQ_BODY_SIZE.
function body(index) {
  if (env.RMQ_BODY_B64) return Buffer.from(env.RMQ_BODY_B64, 'base64');
  return Buffer.from(`${index}-`.padEnd(Number(env.RMQ_BODY_SIZE || 16), 'x'));
}

function message(index) {
  const built = { topic: env.RMQ_TOPIC, body: body(index) };
  if (env.RMQ_TAG) built.tag = env.RMQ_TAG;
  if (env.RMQ_KEYS) built.keys = env.RMQ_KEYS.split(' ').filter(Boolean);
  return built;
}

async function produce(kind) {
  const open = new Set();
  const answer = env.RMQ_TX_ANSWER || 'commit';
  const checkAnswer = env.RMQ_TX_CHECK_ANSWER || 'commit';
  const checker = {
    async check(view) {
      emit('checked', { msgId: view.messageId, answer: checkAnswer });
      if (checkAnswer !== 'unknown') open.delete(view.messageId);
      return RESOLUTIONS[checkAnswer];
    },
  };
  const producer = new Producer({ ...options(), topics: [ env.RMQ_TOPIC ],
    ...(kind === 'transaction' ? { checker } : {}) });
  await producer.startup();
  emit('ready');
  const end = deadline();
  const groups = Number(env.RMQ_MESSAGE_GROUPS || 2);
  const pending = [];
  try {
    for (let index = 0; index < count() && Date.now() < end; index++) {
      const built = message(index);
      const group = kind === 'fifo' ? `g${index % groups}` : null;
      if (group) built.messageGroup = group;
      if (kind === 'delay') built.deliveryTimestamp = new Date(Date.now() + Number(env.RMQ_DELAY_MS));
      const sent = receipt => emit('sent', { index, msgId: receipt.messageId, status: null, group, at: Date.now() });
      const failed = err => emit('error', { stage: 'send', message: String(err) });
      if (kind === 'async') {
        pending.push(producer.send(built).then(sent, failed));
        continue;
      }
      try {
        if (kind === 'transaction') {
          const transaction = producer.beginTransaction();
          const receipt = await producer.send(built, transaction);
          if (answer === 'unknown') open.add(receipt.messageId);
          else if (answer === 'commit') await transaction.commit();
          else await transaction.rollback();
          sent(receipt);
        } else {
          sent(await producer.send(built));
        }
      } catch (err) {
        failed(err);
      }
    }
    await Promise.all(pending);
    while (open.size > 0 && Date.now() < end) await sleep(100);
    // Started RMQ_IDLE_S more: the SDK heartbeats 1 s after start, then every 10 s.
    await sleep(Math.max(0, Math.min(Number(env.RMQ_IDLE_S || 0) * 1000, end - Date.now())));
  } finally {
    await producer.shutdown();
  }
}

// consume-extend: the delivery gets more time (its invisible duration changed), then is acked; the ack must
// carry the receipt handle that change answered, which the SDK keeps on the view.
async function extendThenAck(consumer, view) {
  await consumer.changeInvisibleDuration(view, EXTEND_INVISIBLE_MS);
  await consumer.ack(view);
}

// Receive and ack; with `nack`, a first delivery's invisible duration is changed instead and only its
// redelivery is acked (and counted); with `extend`, each delivery is extended before its ack.
async function consumeSimple(nack, extend = false) {
  const consumer = new SimpleConsumer({ ...options(), consumerGroup: env.RMQ_GROUP, subscriptions: subscriptions() });
  await consumer.startup();
  emit('ready');
  const end = deadline();
  let done = 0;
  try {
    while (done < count() && Date.now() < end) {
      for (const view of await consumer.receive(BATCH, RECEIVE_INVISIBLE_MS)) {
        received(view);
        if (nack && (view.deliveryAttempt || 1) === 1) {
          await consumer.changeInvisibleDuration(view, NACK_INVISIBLE_MS);
        } else {
          await (extend ? extendThenAck(consumer, view) : consumer.ack(view));
          done += 1;
        }
      }
    }
  } finally {
    await consumer.shutdown();
  }
}

async function pushConsumer(listener) {
  const consumer = new PushConsumer({ ...options(), consumerGroup: env.RMQ_GROUP, subscriptions: subscriptions(),
    messageListener: { async consume(view) { listener(view); return ConsumeResult.SUCCESS; } } });
  await consumer.startup();
  return consumer;
}

async function consumePush() {
  let got = 0;
  const consumer = await pushConsumer(view => { received(view); got += 1; });
  emit('ready');
  const end = deadline();
  try {
    while (got < count() && Date.now() < end) await sleep(100);
  } finally {
    await consumer.shutdown();
  }
}

// One producer and one push consumer, started, left alone for `ms` and shut down.
async function idle(ms) {
  const producer = new Producer({ ...options(), topics: [ env.RMQ_TOPIC ] });
  await producer.startup();
  const consumer = await pushConsumer(received);
  emit('ready');
  await sleep(Math.max(0, Math.min(ms, deadline() - Date.now())));
  await consumer.shutdown();
  await producer.shutdown();
}

const SCENARIOS = {
  'produce': () => produce('normal'), 'produce-async': () => produce('async'),
  'produce-delay': () => produce('delay'), 'produce-fifo': () => produce('fifo'),
  'produce-transaction': () => produce('transaction'),
  'consume-simple': () => consumeSimple(false), 'consume-pop': () => consumeSimple(false),
  'consume-nack': () => consumeSimple(true), 'consume-extend': () => consumeSimple(false, true),
  'consume-push': consumePush,
  'idle': () => idle(Number(env.RMQ_IDLE_S || 0) * 1000), 'shutdown': () => idle(0),
};

async function main() {
  const scenario = process.argv[2] || '';
  let status = 0;
  if ((env.RMQ_PROTOCOL || 'grpc') !== 'grpc') {
    emit('unsupported', { reason: `a gRPC SDK does not speak ${env.RMQ_PROTOCOL}` });
    status = UNSUPPORTED;
  } else if (!(scenario in SCENARIOS)) {
    emit('unsupported', { reason: `scenario '${scenario}' is not offered by the Node.js SDK's driver` });
    status = UNSUPPORTED;
  } else {
    try {
      await SCENARIOS[scenario]();
    } catch (err) { // what the SDK raised (a failed start, say) is an event
      emit('error', { stage: scenario, message: String(err && err.stack || err) });
    }
    emit('done');
  }
  out.write('', () => process.exit(status));
}

main();
