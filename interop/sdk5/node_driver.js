// Drives npm `rocketmq-client-nodejs` (Apache RocketMQ's 5.x Node.js SDK, gRPC) from the command line with
// the same commands and JSON events as interop/sdk5/py_driver.py (see interop/sdk5/README.md).
// Run with NODE_PATH=.cache/interop/sdk5/node/node_modules.
'use strict';

const { Producer, SimpleConsumer, PushConsumer, ConsumeResult } = require('rocketmq-client-nodejs');
const { TransactionResolution } = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/definition_pb');

const out = process.stdout;
console.log = console.error; // the SDK's prints go to stderr; stdout carries events only
console.info = console.error;

function emit(event, fields) {
  out.write(JSON.stringify({ event, ...fields }) + '\n');
}

function parse(argv) {
  const args = { command: argv[0], group: 'sdk5-group', count: 1, kind: 'normal', groups: 2, 'delay-ms': 3000,
    resolution: 'commit', check: 'commit', 'wait-checks': 0, expect: 1, 'invisible-s': 20, ack: 'yes',
    'idle-timeout': 20, timeout: 60 };
  for (let i = 1; i + 1 < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    args[key] = typeof args[key] === 'number' ? Number(argv[i + 1]) : argv[i + 1];
  }
  return args;
}

function received(view) {
  emit('received', { messageId: view.messageId, topic: view.topic, tag: view.tag || null,
    keys: [ ...(view.keys || []) ].sort(), group: view.messageGroup || null, body_b64: view.body.toString('base64'),
    attempt: view.deliveryAttempt || null,
    deliveryTimestamp: view.deliveryTimestamp ? view.deliveryTimestamp.getTime() : null, at: Date.now() });
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

async function produce(args, base) {
  let checks = 0;
  const checker = {
    async check(view) {
      checks += 1;
      emit('checked', { messageId: view.messageId, resolution: args.check });
      return args.check === 'commit' ? TransactionResolution.COMMIT : TransactionResolution.ROLLBACK;
    },
  };
  const producer = new Producer({ ...base, topic: args.topic, ...(args.kind === 'transaction' ? { checker } : {}) });
  await producer.startup();
  let ok = true;
  try {
    for (let index = 0; index < args.count; index++) {
      const group = args.kind === 'fifo' ? `g${index % args.groups}` : null;
      const message = { topic: args.topic, tag: 'sdk5', keys: [ `k${index}` ],
        body: Buffer.from(`${args.kind}-${index}`) };
      if (group) message.messageGroup = group;
      if (args.kind === 'delay') message.deliveryTimestamp = new Date(Date.now() + args['delay-ms']);
      try {
        let receipt;
        if (args.kind === 'transaction') {
          const transaction = producer.beginTransaction();
          receipt = await producer.send(message, transaction);
          if (args.resolution === 'commit') await transaction.commit();
          else if (args.resolution === 'rollback') await transaction.rollback();
        } else {
          receipt = await producer.send(message);
        }
        emit('sent', { index, messageId: receipt.messageId, group, at: Date.now() });
      } catch (err) {
        ok = false;
        emit('error', { stage: 'send', index, message: String(err) });
      }
    }
    const deadline = Date.now() + args.timeout * 1000;
    while (checks < args['wait-checks'] && Date.now() < deadline) await sleep(100);
    if (checks < args['wait-checks']) {
      ok = false;
      emit('error', { stage: 'check', message: `${checks} of ${args['wait-checks']} checks` });
    }
  } finally {
    await producer.shutdown();
  }
  return ok;
}

async function receive(args, base) {
  const consumer = new SimpleConsumer({ ...base, consumerGroup: args.group, awaitDuration: 5000,
    subscriptions: new Map([[ args.topic, '*' ]]) });
  await consumer.startup();
  let count = 0;
  try {
    const deadline = Date.now() + args.timeout * 1000;
    let last = Date.now();
    while (count < args.expect && Date.now() < deadline && Date.now() - last < args['idle-timeout'] * 1000) {
      const views = await consumer.receive(16, args['invisible-s'] * 1000);
      for (const view of views) {
        last = Date.now();
        received(view);
        count += 1;
        if (args.ack === 'yes') await consumer.ack(view);
      }
    }
  } finally {
    await consumer.shutdown();
  }
  return count >= args.expect;
}

async function push(args, base) {
  let count = 0;
  let last = Date.now();
  const consumer = new PushConsumer({ ...base, consumerGroup: args.group,
    subscriptions: new Map([[ args.topic, '*' ]]),
    messageListener: { async consume(view) { received(view); count += 1; last = Date.now(); return ConsumeResult.SUCCESS; } } });
  await consumer.startup();
  try {
    const deadline = Date.now() + args.timeout * 1000;
    while (count < args.expect && Date.now() < deadline && Date.now() - last < args['idle-timeout'] * 1000) await sleep(100);
  } finally {
    await consumer.shutdown();
  }
  return count >= args.expect;
}

async function main() {
  const args = parse(process.argv.slice(2));
  const base = { endpoints: args.endpoint, sslEnabled: false, requestTimeout: 10000 };
  let ok = false;
  try {
    ok = await ({ produce, receive, push })[args.command](args, base);
  } catch (err) {
    emit('error', { stage: args.command, message: String(err && err.stack || err) });
  }
  emit('done', { ok });
  out.write('', () => process.exit(ok ? 0 : 1));
}

main();
