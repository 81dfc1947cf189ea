'use strict';
// What every JavaScript driver shares: the command line, the message file, the JSON-lines event stream
// and the "N messages or idle timeout" rule that lets consumers exit by themselves.

const fs = require('fs');

// Client libraries log with console.log; stdout belongs to the event stream, so it goes to stderr.
console.log = console.info = console.debug = (...args) => console.error(...args);

function emit(event, fields) {
  fs.writeSync(1, JSON.stringify({ event, ...fields }) + '\n');
}

// Flags that may be given more than once and therefore collect into lists.
const REPEATABLE = new Set([ 'property', 'property-key' ]);

// Parse `command --flag value ...` into { command, flags }; no dependency beyond the clients themselves.
function parseArgs(argv, defaults) {
  const [ command, ...rest ] = argv;
  const flags = { ...defaults };
  for (const name of REPEATABLE) flags[name] = [];
  for (let i = 0; i < rest.length; i += 2) {
    const name = rest[i].replace(/^--/, '');
    const value = rest[i + 1];
    if (!rest[i].startsWith('--') || value === undefined) {
      throw new Error(`expected --flag value pairs, got ${JSON.stringify(rest.slice(i))}`);
    }
    if (REPEATABLE.has(name)) flags[name].push(value);
    else flags[name] = value;
  }
  return { command, flags };
}

function required(flags, ...names) {
  const missing = names.filter(name => flags[name] === undefined);
  if (missing.length) throw new Error(`missing required flags: ${missing.map(n => '--' + n).join(' ')}`);
}

// Messages come from a JSON file (arbitrary bytes as base64) or are generated from the flags.
function loadMessages(flags) {
  const specs = flags.messages
    ? JSON.parse(fs.readFileSync(flags.messages, 'utf8'))
    : Array.from({ length: Number(flags.count || 1) }, (_, index) => ({
      tags: flags.tags,
      keys: flags.keys,
      properties: Object.fromEntries(flags.property.map(item => {
        const at = item.indexOf('=');
        return [ item.slice(0, at), item.slice(at + 1) ];
      })),
      body_b64: flags['body-b64'] || Buffer.from(`interop-${index}`).toString('base64'),
    }));
  return specs.map(spec => ({ ...spec, body: Buffer.from(spec.body_b64 || '', 'base64') }));
}

// Resolves once `expect` messages were counted or none arrived for `idleSeconds`.
class Arrivals {
  constructor(expect, idleSeconds) {
    this.expect = expect;
    this.idleMs = idleSeconds * 1000;
    this.count = 0;
    this.finished = new Promise(resolve => {
      this.resolve = resolve;
    });
    this.rearm();
  }

  rearm() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.resolve(), this.idleMs);
  }

  record() {
    this.count += 1;
    if (this.count >= this.expect) {
      clearTimeout(this.timer);
      this.resolve();
    } else {
      this.rearm();
    }
  }
}

// The C++ clients take a consume result into their offset table on their own threads after the
// listener returns; waiting this long after the last expected message lets shutdown persist an offset
// past it, so a later run of the same group does not get it again.
const OFFSET_SETTLE_MS = 500;

function settle() {
  return new Promise(resolve => setTimeout(resolve, OFFSET_SETTLE_MS));
}

// Fields every `received` event carries, null where a client does not expose them.
const RECEIVED_FIELDS = [ 'accepted', 'topic', 'tags', 'keys', 'body_b64', 'bodyExact', 'properties', 'msgId', 'queueId',
  'queueOffset', 'reconsumeTimes', 'commitLogOffset', 'storeSize', 'bornTimestamp', 'storeTimestamp' ];

function received(fields) {
  emit('received', Object.fromEntries(RECEIVED_FIELDS.map(name => [ name, fields[name] ?? null ])));
}

// Send every message one after another (`sync`) or all at once and wait for all results (`async`).
async function sendAll(specs, mode, sendOne) {
  const sendIndexed = async (spec, index) => {
    try {
      emit('sent', { index, ...await sendOne(spec) });
      return 0;
    } catch (err) {
      emit('error', { index, stage: 'send', type: err.name, message: err.message });
      return 1;
    }
  };
  let failures = 0;
  if (mode === 'sync') {
    for (const [ index, spec ] of specs.entries()) failures += await sendIndexed(spec, index);
  } else if (mode === 'async') {
    failures = (await Promise.all(specs.map(sendIndexed))).reduce((a, b) => a + b, 0);
  } else {
    throw new Error(`mode ${mode} is not supported by this client (sync, async)`);
  }
  emit('done', { sent: specs.length - failures, errors: failures });
  return failures ? 1 : 0;
}

// Shutting a client down unregisters it and flushes offsets; if the broker never answers, the driver
// must still exit so the test reports the hang instead of becoming it.
const SHUTDOWN_GRACE_MS = 15000;

async function shutdownWithinGrace(shutdown) {
  const timer = setTimeout(() => {
    emit('error', { stage: 'shutdown', message: `client shutdown exceeded ${SHUTDOWN_GRACE_MS} ms` });
    process.exit(3);
  }, SHUTDOWN_GRACE_MS);
  await shutdown();
  clearTimeout(timer);
}

// If a client still holds the event loop open this long after the driver finished, exit regardless.
const EXIT_FALLBACK_MS = 5000;

// `drain`: leave by letting the event loop empty.  An explicit process.exit() while the rocketmq-nodejs
// addon is loaded deadlocks in its teardown (the process never ends), while a natural exit is clean;
// the unreferenced timer fires only if something still keeps the loop alive.  ali-ons keeps timers
// running after close(), so its driver exits explicitly.
function finisher(drain) {
  return status => {
    if (!drain) process.exit(status);
    process.exitCode = status;
    setTimeout(() => process.exit(status), EXIT_FALLBACK_MS).unref();
  };
}

// Run a driver's command table; a thrown error becomes an event before the exit status says so.
function main(commands, defaults, { drain }) {
  const finish = finisher(drain);
  (async () => {
    const { command, flags } = parseArgs(process.argv.slice(2), defaults);
    const run = commands[command];
    if (!run) throw new Error(`unknown command ${command}; expected one of ${Object.keys(commands)}`);
    return run(flags);
  })().then(finish, err => {
    emit('error', { stage: 'driver', type: err.name, message: err.message });
    finish(2);
  });
}

// A producer stays started `--stay` seconds after its sends (0: none), so its scheduled heartbeats are seen.
function stayStarted(flags) {
  return new Promise(resolve => setTimeout(resolve, Number(flags.stay || 0) * 1000));
}

module.exports = {
  emit, received, settle, required, loadMessages, Arrivals, sendAll, stayStarted, shutdownWithinGrace, main,
};
