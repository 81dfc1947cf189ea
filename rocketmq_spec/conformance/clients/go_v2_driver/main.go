// Drives Apache RocketMQ's Go remoting client (github.com/apache/rocketmq-client-go/v2) as a client-suite
// driver:
//
//	driver SCENARIO      (configuration in RMQ_* variables: docs/clients.md, "Ten minutes: write a driver")
//
// with the scenarios and JSON events of the Java ClientDriver. The client keeps its defaults: only the name
// server, the group, credentials (primitive.Credentials, ACL 1.0) and what a scenario needs are set, so the
// frames the suite judges are the client's own. Built by rocketmq_spec.conformance.clients.go_v2 into the
// clients cache; go.sum pins the module.
package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	contract "rocketmq-spec/drivercontract"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

const (
	pollEvery = 100 * time.Millisecond
	pullPoll  = time.Second
)

func message(index int) *primitive.Message {
	msg := primitive.NewMessage(os.Getenv("RMQ_TOPIC"), contract.Body(index))
	if tag := os.Getenv("RMQ_TAG"); tag != "" {
		msg.WithTag(tag)
	}
	if keys := strings.Fields(os.Getenv("RMQ_KEYS")); len(keys) > 0 {
		msg.WithKeys(keys)
	}
	return msg
}

func credentials() (primitive.Credentials, bool) {
	access := os.Getenv("RMQ_ACCESS_KEY")
	return primitive.Credentials{AccessKey: access, SecretKey: os.Getenv("RMQ_SECRET_KEY")}, access != ""
}

func nameServer() primitive.NsResolver {
	return primitive.NewPassthroughResolver([]string{os.Getenv("RMQ_NAMESRV")})
}

func producerOptions(extra ...producer.Option) []producer.Option {
	options := []producer.Option{producer.WithNsResolver(nameServer()), producer.WithGroupName(os.Getenv("RMQ_GROUP"))}
	if c, ok := credentials(); ok {
		options = append(options, producer.WithCredentials(c))
	}
	return append(options, extra...)
}

func consumerOptions() []consumer.Option {
	options := []consumer.Option{consumer.WithNsResolver(nameServer()), consumer.WithGroupName(os.Getenv("RMQ_GROUP"))}
	if c, ok := credentials(); ok {
		options = append(options, consumer.WithCredentials(c))
	}
	return options
}

func selector() consumer.MessageSelector {
	return consumer.MessageSelector{Type: consumer.TAG, Expression: contract.Env("RMQ_TAG", "*")}
}

var statuses = map[primitive.SendStatus]string{primitive.SendOK: "SEND_OK",
	primitive.SendFlushDiskTimeout: "FLUSH_DISK_TIMEOUT", primitive.SendFlushSlaveTimeout: "FLUSH_SLAVE_TIMEOUT",
	primitive.SendSlaveNotAvailable: "SLAVE_NOT_AVAILABLE", primitive.SendUnknownError: "UNKNOWN_ERROR"}

func sent(index int, msgID string, result *primitive.SendResult) map[string]any {
	fields := map[string]any{"index": index, "msgId": msgID, "status": nil}
	if result != nil {
		fields["status"] = statuses[result.Status]
		if result.MessageQueue != nil {
			fields["queueId"] = result.MessageQueue.QueueId
		}
	}
	return fields
}

func received(msg *primitive.MessageExt) {
	contract.Emit("received", map[string]any{"msgId": msg.MsgId, "topic": msg.Topic,
		"body_b64": base64.StdEncoding.EncodeToString(msg.Body), "reconsumeTimes": msg.ReconsumeTimes,
		"queueId": msg.Queue.QueueId, "queueOffset": msg.QueueOffset, "tag": msg.GetTags(), "keys": msg.GetKeys()})
}

func newProducer(extra ...producer.Option) func() (rocketmq.Producer, error) {
	return func() (rocketmq.Producer, error) { return rocketmq.NewProducer(producerOptions(extra...)...) }
}

// produce sends RMQ_COUNT messages one by one in the given mode, then stays RMQ_IDLE_S (when set).
func produce(mode string) error {
	var extra []producer.Option
	if mode == "fifo" {
		extra = append(extra, producer.WithQueueSelector(producer.NewHashQueueSelector()))
	}
	return contract.Run(newProducer(extra...), func(p rocketmq.Producer) error { return sendAll(p, mode) })
}

// sendAll is produce once the producer started.
func sendAll(p rocketmq.Producer, mode string) error {
	end, groups := contract.Deadline(), contract.Number("RMQ_MESSAGE_GROUPS", 2)
	var pending sync.WaitGroup
	for i := 0; i < contract.Number("RMQ_COUNT", 1) && time.Now().Before(end); i++ {
		index, msg := i, message(i)
		var err error
		switch mode {
		case "async":
			pending.Add(1)
			err = p.SendAsync(context.Background(), func(_ context.Context, result *primitive.SendResult, err error) {
				defer pending.Done()
				if err != nil {
					contract.Emit("error", map[string]any{"stage": "send", "message": err.Error()})
					return
				}
				contract.Emit("sent", sent(index, result.MsgID, result))
			}, msg)
			if err != nil {
				pending.Done()
				contract.Emit("error", map[string]any{"stage": "send", "message": err.Error()})
			}
			continue
		case "oneway":
			// no answer: the id is the one the client put on the message
			if err = p.SendOneWay(context.Background(), msg); err == nil {
				contract.Emit("sent", sent(index, msg.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex), nil))
			}
		case "delay":
			msg.WithDelayTimeLevel(contract.Number("RMQ_DELAY_LEVEL", 1))
			err = sendSync(p, index, msg, nil)
		case "fifo":
			key := fmt.Sprintf("g%d", i%groups)
			msg.WithShardingKey(key)
			err = sendSync(p, index, msg, map[string]any{"group": key})
		default:
			err = sendSync(p, index, msg, nil)
		}
		if err != nil {
			contract.Emit("error", map[string]any{"stage": "send", "message": err.Error()})
		}
	}
	pending.Wait()
	time.Sleep(contract.IdleFor(end))
	return nil
}

func sendSync(p rocketmq.Producer, index int, msg *primitive.Message, more map[string]any) error {
	result, err := p.SendSync(context.Background(), msg)
	if err != nil {
		return err
	}
	fields := sent(index, result.MsgID, result)
	for k, v := range more {
		fields[k] = v
	}
	contract.Emit("sent", fields)
	return nil
}

// produceBatch sends RMQ_COUNT messages as one batch; the result's id list names each message.
func produceBatch() error {
	return contract.Run(newProducer(), sendBatch)
}

func sendBatch(p rocketmq.Producer) error {
	count := contract.Number("RMQ_COUNT", 1)
	batch := make([]*primitive.Message, count)
	for i := range batch {
		batch[i] = message(i)
	}
	result, err := p.SendSync(context.Background(), batch...)
	if err != nil {
		contract.Emit("error", map[string]any{"stage": "send", "message": err.Error()})
		return nil
	}
	ids := strings.Split(result.MsgID, ",")
	for i := 0; i < count; i++ {
		var id any
		if i < len(ids) && ids[i] != "" {
			id = ids[i]
		}
		fields := sent(i, "", result)
		fields["msgId"] = id
		contract.Emit("sent", fields)
	}
	return nil
}

func state(answer string) primitive.LocalTransactionState {
	switch answer {
	case "commit":
		return primitive.CommitMessageState
	case "rollback":
		return primitive.RollbackMessageState
	}
	return primitive.UnkonwnState
}

// listener answers local transactions RMQ_TX_ANSWER and check-backs RMQ_TX_CHECK_ANSWER, and keeps the ids
// whose fate is still open (answered unknown, not settled by a check).
type listener struct {
	answer, checkAnswer string
	open                sync.Map
}

func (l *listener) ExecuteLocalTransaction(msg *primitive.Message) primitive.LocalTransactionState {
	if l.answer == "unknown" {
		l.open.Store(msg.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex), true)
	}
	return state(l.answer)
}

func (l *listener) CheckLocalTransaction(msg *primitive.MessageExt) primitive.LocalTransactionState {
	id := msg.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex)
	contract.Emit("checked", map[string]any{"msgId": id, "answer": l.checkAnswer})
	if l.checkAnswer != "unknown" {
		l.open.Delete(id)
	}
	return state(l.checkAnswer)
}

func (l *listener) anyOpen() bool {
	left := false
	l.open.Range(func(_, _ any) bool { left = true; return false })
	return left
}

// produceTransaction stays up while a message's fate is open, so that the broker's check-back reaches it.
func produceTransaction() error {
	l := &listener{answer: contract.Env("RMQ_TX_ANSWER", "commit"), checkAnswer: contract.Env("RMQ_TX_CHECK_ANSWER", "commit")}
	newClient := func() (rocketmq.TransactionProducer, error) {
		return rocketmq.NewTransactionProducer(l, producerOptions()...)
	}
	return contract.Run(newClient, func(p rocketmq.TransactionProducer) error { return sendInTransaction(p, l) })
}

func sendInTransaction(p rocketmq.TransactionProducer, l *listener) error {
	end := contract.Deadline()
	for i := 0; i < contract.Number("RMQ_COUNT", 1) && time.Now().Before(end); i++ {
		result, err := p.SendMessageInTransaction(context.Background(), message(i))
		if err != nil {
			contract.Emit("error", map[string]any{"stage": "send", "message": err.Error()})
			continue
		}
		fields := sent(i, result.MsgID, result.SendResult)
		fields["localTransactionState"] = l.answer
		contract.Emit("sent", fields)
	}
	for l.anyOpen() && time.Now().Before(end) {
		time.Sleep(pollEvery)
	}
	return nil
}

// newPushConsumer makes a push consumer subscribed to RMQ_TOPIC, handing each message to onMessage.
func newPushConsumer(onMessage func(*primitive.MessageExt)) func() (rocketmq.PushConsumer, error) {
	return func() (rocketmq.PushConsumer, error) {
		c, err := rocketmq.NewPushConsumer(consumerOptions()...)
		if err == nil {
			err = c.Subscribe(os.Getenv("RMQ_TOPIC"), selector(),
				func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
					for _, msg := range msgs {
						onMessage(msg)
					}
					return consumer.ConsumeSuccess, nil
				})
		}
		return c, err
	}
}

func consumePush() error {
	var got atomic.Int32
	return contract.Run(newPushConsumer(func(msg *primitive.MessageExt) { received(msg); got.Add(1) }),
		func(rocketmq.PushConsumer) error {
			end := contract.Deadline()
			for int(got.Load()) < contract.Number("RMQ_COUNT", 1) && time.Now().Before(end) {
				time.Sleep(pollEvery)
			}
			return nil
		})
}

// consumePull polls the client's pull consumer (its lite pull: rebalanced queues, pulled in the background).
func consumePull() error {
	newClient := func() (rocketmq.PullConsumer, error) {
		c, err := rocketmq.NewPullConsumer(consumerOptions()...)
		if err == nil {
			err = c.Subscribe(os.Getenv("RMQ_TOPIC"), selector())
		}
		return c, err
	}
	return contract.Run(newClient, poll)
}

func poll(c rocketmq.PullConsumer) error {
	end, got := contract.Deadline(), 0
	for got < contract.Number("RMQ_COUNT", 1) && time.Now().Before(end) {
		request, err := c.Poll(context.Background(), pullPoll)
		if err != nil || request == nil {
			continue // Poll reports an empty wait as an error
		}
		for _, msg := range request.GetMsgList() {
			received(msg)
			got++
		}
		c.ACK(context.Background(), request, consumer.ConsumeSuccess)
	}
	return nil
}

// idle starts one producer and one push consumer, leaves them alone RMQ_IDLE_S and shuts them down.
func idle(stay bool) error {
	p, err := contract.Started(newProducer()())
	if err != nil {
		return err
	}
	defer func() { _ = p.Shutdown() }()
	return contract.Run(newPushConsumer(received), func(rocketmq.PushConsumer) error {
		if stay {
			time.Sleep(contract.IdleFor(contract.Deadline()))
		}
		return nil
	})
}

var scenarios = map[string]func() error{
	"produce":             func() error { return produce("sync") },
	"produce-async":       func() error { return produce("async") },
	"produce-oneway":      func() error { return produce("oneway") },
	"produce-delay":       func() error { return produce("delay") },
	"produce-fifo":        func() error { return produce("fifo") },
	"produce-batch":       produceBatch,
	"produce-transaction": produceTransaction,
	"consume-push":        consumePush,
	"consume-pull":        consumePull,
	"idle":                func() error { return idle(true) },
	"shutdown":            func() error { return idle(false) },
}

func main() {
	scenario := ""
	if len(os.Args) > 1 {
		scenario = os.Args[1]
	}
	if protocol := contract.Env("RMQ_PROTOCOL", "remoting"); protocol != "remoting" {
		contract.Emit("unsupported", map[string]any{"reason": "a remoting client does not speak " + protocol})
		os.Exit(contract.Unsupported)
	}
	run, ok := scenarios[scenario]
	if !ok {
		contract.Emit("unsupported", map[string]any{"reason": fmt.Sprintf("scenario %q is not offered by the Go client "+
			"(no pop consumer in rocketmq-client-go v2)", scenario)})
		os.Exit(contract.Unsupported)
	}
	rlog.SetLogLevel(contract.Env("ROCKETMQ_GO_LOG_LEVEL", "warn")) // its logrus logger writes to stderr, kept for the report
	if err := run(); err != nil {                                   // what the client raised (a failed start, say) is an event
		contract.Emit("error", map[string]any{"stage": scenario, "message": err.Error()})
	}
	contract.Emit("done", map[string]any{})
	os.Exit(0)
}
