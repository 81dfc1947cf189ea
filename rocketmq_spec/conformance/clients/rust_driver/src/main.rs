//! The client driver contract of `rmq-conformance client`, run by rocketmq-client-rust (crates.io).
//!
//! One scenario per run (`rust-client-driver SCENARIO`), configured by the `RMQ_*` variables the suite
//! sets; one JSON event per line on stdout, flushed, `done` last. The client's own log goes to stderr
//! (rocketmq-observability's default writer), which the suite keeps in the case's log. The scenarios are
//! those of the Java remoting driver (`rocketmq_spec/apache/java/ClientDriver.java`), written with this
//! crate's equivalents: `DefaultMQProducer`, `TransactionMQProducer`, `DefaultMQPushConsumer` (its pop
//! mode for `consume-pop`) and `DefaultLitePullConsumer`.

use std::collections::HashSet;
use std::env;
use std::io::Write;
use std::process::exit;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use cheetah_string::CheetahString;
use rocketmq_client_rust::{
    AclClientRPCHook, ClientError, ClientResult, ClientRpcHook, ClientRuntime, ClientRuntimeConfig, ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus, DefaultLitePullConsumer, DefaultMQProducer, DefaultMQPushConsumer,
    LocalTransactionState, MQPushConsumer, MessageListenerConcurrently, MessageQueueSelector,
    SelectMessageQueueByHash, SendResult, SessionCredentials, TransactionListener, TransactionMQProducer,
};
use rocketmq_model::common::message::message_ext::MessageExt;
use rocketmq_model::common::message::message_queue::MessageQueue;
use rocketmq_model::common::message::message_single::Message;
use rocketmq_model::common::message::{MessageConst, MessageTrait};
use rocketmq_runtime::{RuntimeConfig, RuntimeOwner};
use serde_json::{json, Map, Value};

/// Exit status of a scenario the driver does not implement (the contract's 3).
const UNSUPPORTED: i32 = 3;
/// Time kept back from RMQ_TIMEOUT_S to shut the client down before the suite's kill.
const SHUTDOWN_MARGIN: Duration = Duration::from_secs(5);

static EVENTS: Mutex<()> = Mutex::new(());

fn emit(event: &str, fields: Value) {
    let mut line = Map::new();
    line.insert("event".into(), event.into());
    if let Value::Object(rest) = fields {
        line.extend(rest);
    }
    let _guard = EVENTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", Value::Object(line));
    let _ = out.flush();
}

fn error(stage: &str, err: &dyn std::fmt::Display) {
    emit("error", json!({"stage": stage, "message": err.to_string()}));
}

fn unsupported(reason: &str) -> ! {
    emit("unsupported", json!({"reason": reason}));
    exit(UNSUPPORTED);
}

/// The message id a Java client reports (MessageClientExt.getMsgId): the client-made UNIQ_KEY when the
/// message has one, else the broker's offset id.
fn uniq_id(message: &dyn MessageTrait) -> Option<String> {
    message
        .property(&CheetahString::from_static_str(MessageConst::PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX))
        .map(|id| id.to_string())
}

fn sent(index: usize, result: Option<&SendResult>) -> Value {
    let mut fields = json!({
        "index": index,
        "msgId": result.and_then(|r| r.msg_id.as_ref()).map(|id| id.to_string()),
        "status": result.map(|r| r.send_status.to_string()),
    });
    if let Some(queue) = result.and_then(|r| r.message_queue.as_ref()) {
        fields["queueId"] = queue.queue_id().into();
    }
    fields
}

fn received(message: &MessageExt) {
    let msg_id = uniq_id(message).unwrap_or_else(|| message.msg_id().to_string());
    let body = message.body().map(|body| BASE64.encode(body)).unwrap_or_default();
    emit("received", json!({
        "msgId": msg_id, "topic": message.topic().to_string(), "body_b64": body,
        "reconsumeTimes": message.reconsume_times(), "queueId": message.queue_id(),
        "queueOffset": message.queue_offset(), "tag": message.get_tags().map(|t| t.to_string()),
        "keys": message.get_keys().map(|k| k.to_string()),
    }));
}

/// What every scenario reads from the environment.
struct Driver {
    namesrv: String,
    topic: String,
    group: String,
    count: usize,
    deadline: Instant,
    credentials: Option<(String, String)>,
    runtime: Arc<ClientRuntime>,
}

fn variable(name: &str) -> Option<String> {
    env::var(name).ok().filter(|value| !value.is_empty())
}

fn required(name: &str) -> String {
    variable(name).unwrap_or_else(|| {
        eprintln!("{name} is not set");
        exit(2)
    })
}

impl Driver {
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// The ACL 1.0 signature of every request, when the suite gives credentials.
    fn hook(&self) -> Option<Arc<ClientRpcHook>> {
        self.credentials.as_ref().map(|(access, secret)| {
            let credentials = SessionCredentials::with_keys(access.as_str(), secret.as_str());
            Arc::new(AclClientRPCHook::new(credentials)) as Arc<ClientRpcHook>
        })
    }

    /// RMQ_BODY_B64 when set, else the index in decimal and a dash, padded with 'x' to RMQ_BODY_SIZE.
    fn body(&self, index: usize) -> Vec<u8> {
        if let Some(exact) = variable("RMQ_BODY_B64") {
            return BASE64.decode(exact).unwrap_or_else(|e| {
                eprintln!("RMQ_BODY_B64 is not base64: {e}");
                exit(2)
            });
        }
        let size: usize = variable("RMQ_BODY_SIZE").and_then(|s| s.parse().ok()).unwrap_or(16);
        let mut text = format!("{index}-").into_bytes();
        text.resize(size.max(text.len()), b'x');
        text
    }

    fn message(&self, index: usize, delay_level: Option<i32>) -> Message {
        let mut builder = Message::builder().topic(self.topic.as_str()).body(self.body(index));
        if let Some(tag) = variable("RMQ_TAG") {
            builder = builder.tags(tag);
        }
        if let Some(keys) = variable("RMQ_KEYS") {
            builder = builder.key(keys); // kept space-separated, as Java's Message.setKeys(String) does
        }
        if let Some(level) = delay_level {
            builder = builder.delay_level(level);
        }
        builder.build_unchecked()
    }

    async fn producer(&self) -> ClientResult<DefaultMQProducer> {
        let mut builder = DefaultMQProducer::builder(self.runtime.clone())
            .producer_group(self.group.as_str())
            .name_server_addr(self.namesrv.as_str());
        if let Some(hook) = self.hook() {
            builder = builder.rpc_hook(hook);
        }
        let mut producer = builder.build();
        producer.start().await?;
        Ok(producer)
    }

    async fn produce(&self, scenario: &str) -> ClientResult<()> {
        let producer = self.producer().await?;
        emit("ready", json!({}));
        let delay = (scenario == "produce-delay").then(|| {
            required("RMQ_DELAY_LEVEL").parse::<i32>().unwrap_or_else(|e| {
                eprintln!("RMQ_DELAY_LEVEL: {e}");
                exit(2)
            })
        });
        let groups: usize = variable("RMQ_MESSAGE_GROUPS").and_then(|s| s.parse().ok()).unwrap_or(2).max(1);
        let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let mut pending = 0usize;
        for index in 0..self.count {
            if self.left().is_zero() {
                break;
            }
            let message = self.message(index, delay);
            match scenario {
                "produce-async" => {
                    let done = done_tx.clone();
                    let callback = move |result: Option<&SendResult>, err: Option<&ClientError>| {
                        match (result, err) {
                            (_, Some(err)) => error("send", err),
                            (result, None) => emit("sent", sent(index, result)),
                        }
                        let _ = done.send(());
                    };
                    match producer.send_with_callback(message, callback).await {
                        Ok(()) => pending += 1,
                        Err(err) => error("send", &err),
                    }
                }
                "produce-oneway" => match producer.send_oneway(message).await {
                    // no answer, and the message was moved into the send: its id is not known here
                    Ok(()) => emit("sent", sent(index, None)),
                    Err(err) => error("send", &err),
                },
                "produce-fifo" => {
                    let key = format!("g{}", index % groups);
                    let select = |queues: &[MessageQueue], message: &Message, key: &String| {
                        SelectMessageQueueByHash.select(queues, message, key)
                    };
                    match producer.send_with_selector(message, select, key.clone()).await {
                        Ok(result) => {
                            let mut fields = sent(index, result.as_ref());
                            fields["group"] = key.into();
                            emit("sent", fields);
                        }
                        Err(err) => error("send", &err),
                    }
                }
                _ => match producer.send(message).await {
                    Ok(result) => emit("sent", sent(index, result.as_ref())),
                    Err(err) => error("send", &err),
                },
            }
        }
        drop(done_tx);
        while pending > 0 {
            match tokio::time::timeout(self.left(), done_rx.recv()).await {
                Ok(Some(())) => pending -= 1,
                _ => break,
            }
        }
        let mut producer = producer;
        producer.shutdown().await;
        Ok(())
    }

    async fn produce_batch(&self) -> ClientResult<()> {
        let mut producer = self.producer().await?;
        emit("ready", json!({}));
        let batch: Vec<Message> = (0..self.count).map(|index| self.message(index, None)).collect();
        match producer.send_batch(batch).await {
            Ok(result) => {
                let ids: Vec<String> = result
                    .msg_id
                    .as_ref()
                    .map(|ids| ids.as_str().split(',').map(str::to_owned).collect())
                    .unwrap_or_default();
                for index in 0..self.count {
                    let mut fields = sent(index, Some(&result));
                    fields["msgId"] = ids.get(index).cloned().into();
                    emit("sent", fields);
                }
            }
            Err(err) => error("send", &err),
        }
        producer.shutdown().await;
        Ok(())
    }

    /// Local transactions answer RMQ_TX_ANSWER, check-backs RMQ_TX_CHECK_ANSWER; while a message's fate
    /// is open (answered unknown, not settled by a check) the producer stays up to be checked.
    async fn produce_transaction(&self) -> ClientResult<()> {
        let answer = variable("RMQ_TX_ANSWER").unwrap_or_else(|| "commit".into());
        let check = variable("RMQ_TX_CHECK_ANSWER").unwrap_or_else(|| "commit".into());
        let listener = Answers { local: state(&answer), check: state(&check), check_name: check, open: Arc::default() };
        let open = listener.open.clone();
        let mut builder = TransactionMQProducer::builder(self.runtime.clone())
            .producer_group(self.group.as_str())
            .name_server_addr(self.namesrv.as_str())
            .topics(vec![self.topic.as_str()])
            .transaction_listener(listener);
        if let Some(hook) = self.hook() {
            builder = builder.rpc_hook(hook);
        }
        let mut producer = builder.build();
        producer.start().await?;
        emit("ready", json!({}));
        for index in 0..self.count {
            if self.left().is_zero() {
                break;
            }
            match producer.send_message_in_transaction::<(), _>(self.message(index, None), None).await {
                Ok(result) => {
                    let mut fields = sent(index, result.send_result.as_ref());
                    fields["localTransactionState"] =
                        result.local_transaction_state.map(|s| java_state(s).to_owned()).into();
                    emit("sent", fields);
                }
                Err(err) => error("send", &err),
            }
        }
        while !open.lock().unwrap_or_else(|p| p.into_inner()).is_empty() && !self.left().is_zero() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        producer.shutdown().await;
        Ok(())
    }

    async fn push_consumer(&self, pop: bool, stop_after: usize) -> ClientResult<(DefaultMQPushConsumer, Arc<tokio::sync::Notify>)> {
        let mut builder = DefaultMQPushConsumer::builder(self.runtime.clone())
            .consumer_group(self.group.as_str())
            .name_server_addr(self.namesrv.as_str())
            .rpc_hook(self.hook());
        if pop {
            builder = builder.client_rebalance(false);
        }
        let mut consumer = builder.build();
        consumer.subscribe(self.topic.as_str(), variable("RMQ_TAG").unwrap_or_else(|| "*".into())).await?;
        let enough = Arc::new(tokio::sync::Notify::new());
        consumer.register_message_listener_concurrently(Deliveries {
            seen: Mutex::new(0),
            stop_after,
            enough: enough.clone(),
        });
        consumer.start().await?;
        emit("ready", json!({}));
        Ok((consumer, enough))
    }

    async fn consume_push(&self, pop: bool) -> ClientResult<()> {
        let (mut consumer, enough) = self.push_consumer(pop, self.count).await?;
        let _ = tokio::time::timeout(self.left(), enough.notified()).await;
        consumer.shutdown().await;
        Ok(())
    }

    async fn consume_pull(&self) -> ClientResult<()> {
        let mut builder = DefaultLitePullConsumer::builder(self.runtime.clone())
            .consumer_group(self.group.as_str())
            .name_server_addr(self.namesrv.as_str());
        if let Some(hook) = self.hook() {
            builder = builder.rpc_hook(hook);
        }
        let consumer = builder.build()?;
        consumer
            .subscribe_with_expression(&self.topic, &variable("RMQ_TAG").unwrap_or_else(|| "*".into()))
            .await?;
        consumer.start().await?;
        emit("ready", json!({}));
        let mut seen = 0;
        while seen < self.count && !self.left().is_zero() {
            let wait = self.left().min(Duration::from_secs(1)).as_millis().max(1) as u64;
            for message in consumer.poll_with_timeout(wait).await {
                received(&message);
                seen += 1;
            }
        }
        consumer.shutdown().await;
        Ok(())
    }

    /// One producer and one push consumer of the topic, started, left alone for `idle` and shut down.
    async fn idle(&self, idle: Duration) -> ClientResult<()> {
        let mut producer = self.producer().await?;
        let (mut consumer, _) = self.push_consumer(false, usize::MAX).await?;
        tokio::time::sleep(idle.min(self.left())).await;
        consumer.shutdown().await;
        producer.shutdown().await;
        Ok(())
    }
}

struct Deliveries {
    seen: Mutex<usize>,
    stop_after: usize,
    enough: Arc<tokio::sync::Notify>,
}

impl MessageListenerConcurrently for Deliveries {
    fn consume_message(
        &self,
        messages: &[&MessageExt],
        _context: &ConsumeConcurrentlyContext,
    ) -> ClientResult<ConsumeConcurrentlyStatus> {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        for message in messages {
            received(message);
            *seen += 1;
        }
        if *seen >= self.stop_after {
            self.enough.notify_one();
        }
        Ok(ConsumeConcurrentlyStatus::ConsumeSuccess)
    }
}

struct Answers {
    local: LocalTransactionState,
    check: LocalTransactionState,
    check_name: String,
    open: Arc<Mutex<HashSet<String>>>,
}

impl TransactionListener for Answers {
    fn execute_local_transaction(
        &self,
        message: &dyn MessageTrait,
        _argument: Option<&(dyn std::any::Any + Send + Sync)>,
    ) -> LocalTransactionState {
        if self.local == LocalTransactionState::Unknown {
            if let Some(id) = uniq_id(message) {
                self.open.lock().unwrap_or_else(|p| p.into_inner()).insert(id);
            }
        }
        self.local
    }

    fn check_local_transaction(&self, message: &MessageExt) -> LocalTransactionState {
        let id = uniq_id(message);
        emit("checked", json!({"msgId": id, "answer": self.check_name}));
        if self.check != LocalTransactionState::Unknown {
            if let Some(id) = id {
                self.open.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
            }
        }
        self.check
    }
}

fn state(answer: &str) -> LocalTransactionState {
    match answer {
        "commit" => LocalTransactionState::CommitMessage,
        "rollback" => LocalTransactionState::RollbackMessage,
        "unknown" => LocalTransactionState::Unknown,
        other => {
            eprintln!("a transaction answer is commit, rollback or unknown, not {other}");
            exit(2)
        }
    }
}

/// The name Java's LocalTransactionState gives the state (the contract reports Java's names).
fn java_state(state: LocalTransactionState) -> &'static str {
    match state {
        LocalTransactionState::CommitMessage => "COMMIT_MESSAGE",
        LocalTransactionState::RollbackMessage => "ROLLBACK_MESSAGE",
        LocalTransactionState::Unknown => "UNKNOW",
    }
}

const SCENARIOS: &[&str] = &[
    "produce", "produce-async", "produce-oneway", "produce-batch", "produce-transaction", "produce-delay",
    "produce-fifo", "consume-push", "consume-pull", "consume-pop", "idle", "shutdown",
];

async fn run(driver: &Driver, scenario: &str) -> ClientResult<()> {
    match scenario {
        "produce-batch" => driver.produce_batch().await,
        "produce-transaction" => driver.produce_transaction().await,
        "consume-push" => driver.consume_push(false).await,
        "consume-pop" => driver.consume_push(true).await,
        "consume-pull" => driver.consume_pull().await,
        "idle" => {
            let seconds: u64 = variable("RMQ_IDLE_S").and_then(|s| s.parse().ok()).unwrap_or(0);
            driver.idle(Duration::from_secs(seconds)).await
        }
        "shutdown" => driver.idle(Duration::ZERO).await,
        _ => driver.produce(scenario).await,
    }
}

#[tokio::main]
async fn main() {
    let scenario = env::args().nth(1).unwrap_or_default();
    let protocol = variable("RMQ_PROTOCOL").unwrap_or_else(|| "remoting".into());
    if protocol != "remoting" {
        unsupported(&format!("rocketmq-client-rust is a remoting client; it does not speak {protocol}"));
    }
    if !SCENARIOS.contains(&scenario.as_str()) {
        unsupported(&format!("scenario {scenario} is not implemented by the rocketmq-client-rust driver"));
    }
    let budget = Duration::from_secs_f64(variable("RMQ_TIMEOUT_S").and_then(|s| s.parse().ok()).unwrap_or(60.0));
    let deadline = Instant::now() + budget.saturating_sub(SHUTDOWN_MARGIN).max(budget / 2);
    let owner = RuntimeOwner::plan(RuntimeConfig { thread_name: "rmq-driver".into(), ..Default::default() })
        .map_err(|e| e.to_string())
        .and_then(|plan| plan.build().map_err(|e| e.to_string()))
        .unwrap_or_else(|e| {
            eprintln!("the client runtime could not be made: {e}");
            exit(2)
        });
    let telemetry = rocketmq_observability::install_global(&rocketmq_observability::TelemetryBootstrapConfig::default())
        .unwrap_or_else(|e| {
            eprintln!("the client's telemetry could not be set up: {e}");
            exit(2)
        });
    let runtime = ClientRuntime::try_new(
        owner.root_context().component("client"),
        ClientRuntimeConfig::default(),
        telemetry.handle(),
    )
    .unwrap_or_else(|e| {
        eprintln!("the client runtime could not be made: {e}");
        exit(2)
    });
    let credentials = variable("RMQ_ACCESS_KEY").map(|access| (access, variable("RMQ_SECRET_KEY").unwrap_or_default()));
    let driver = Driver {
        namesrv: required("RMQ_NAMESRV"),
        topic: required("RMQ_TOPIC"),
        group: variable("RMQ_GROUP").unwrap_or_else(|| "rmqspec_driver".into()),
        count: variable("RMQ_COUNT").and_then(|s| s.parse().ok()).unwrap_or(1),
        deadline,
        credentials,
        runtime: runtime.clone(),
    };
    if let Err(err) = run(&driver, &scenario).await {
        error(&scenario, &err); // what the client raised (a failed start, say) is an event
    }
    emit("done", json!({}));
    let _ = tokio::time::timeout(SHUTDOWN_MARGIN / 2, runtime.shutdown()).await;
    exit(0); // the client's background tasks are not waited for: the contract's work is done
}
