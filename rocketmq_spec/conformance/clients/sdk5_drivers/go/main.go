// Drives Apache RocketMQ's 5.x Go SDK (github.com/apache/rocketmq-clients/golang/v5, gRPC) as a client-suite
// driver:
//
//	driver SCENARIO      (configuration in RMQ_* variables; see README.md beside it)
//
// with the same scenarios and JSON events as py_driver.py. The SDK keeps its default settings:
// only the endpoint, credentials, TLS (the package variable EnableSsl, on by default, set from RMQ_TLS) and
// what a scenario needs are set. Built by rocketmq_spec.conformance.clients.sdk5 into its cache.
package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	contract "rocketmq-spec/drivercontract"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
)

const (
	receiveInvisible = 15 * time.Second // the other SDKs' default invisible duration of a receive
	nackInvisible    = 5 * time.Second  // consume-nack: a first delivery's new invisible duration
	extendInvisible  = 30 * time.Second // consume-extend: each delivery's new invisible duration before its ack
	receiveBatch     = 16
	// simpleAwait is the simple consumer's long-polling wait. The SDK's default is 0, which a proxy refuses
	// (ILLEGAL_POLLING_TIME: no time left for polling); 30 s is what the Java driver gives, the proxy's default.
	simpleAwait          = 30 * time.Second
	defaultMessageGroups = 2
)

func received(mv *rmq.MessageView) {
	keys := append([]string{}, mv.GetKeys()...)
	sort.Strings(keys)
	var delivery any
	if ts := mv.GetDeliveryTimestamp(); ts != nil {
		delivery = ts.UnixMilli()
	}
	contract.Emit("received", map[string]any{"msgId": mv.GetMessageId(), "topic": mv.GetTopic(),
		"body_b64": base64.StdEncoding.EncodeToString(mv.GetBody()), "reconsumeTimes": mv.GetDeliveryAttempt() - 1,
		"tag": mv.GetTag(), "keys": keys, "group": mv.GetMessageGroup(), "deliveryTimestamp": delivery,
		"at": time.Now().UnixMilli()})
}

func message(index int) *rmq.Message {
	msg := &rmq.Message{Topic: os.Getenv("RMQ_TOPIC"), Body: contract.Body(index)}
	if tag := os.Getenv("RMQ_TAG"); tag != "" {
		msg.SetTag(tag)
	}
	if keys := strings.Fields(os.Getenv("RMQ_KEYS")); len(keys) > 0 {
		msg.SetKeys(keys...)
	}
	return msg
}

func resolution(answer string) rmq.TransactionResolution {
	switch answer {
	case "commit":
		return rmq.COMMIT
	case "rollback":
		return rmq.ROLLBACK
	}
	return rmq.UNKNOWN
}

func config() *rmq.Config {
	return &rmq.Config{Endpoint: os.Getenv("RMQ_ENDPOINT"), ConsumerGroup: os.Getenv("RMQ_GROUP"),
		Credentials: &credentials.SessionCredentials{AccessKey: os.Getenv("RMQ_ACCESS_KEY"),
			AccessSecret: os.Getenv("RMQ_SECRET_KEY")}}
}

func subscriptions() map[string]*rmq.FilterExpression {
	return map[string]*rmq.FilterExpression{os.Getenv("RMQ_TOPIC"): rmq.NewFilterExpression(contract.Env("RMQ_TAG", "*"))}
}

type sdkError struct {
	stage string
	err   error
}

func (e sdkError) Error() string { return e.stage + ": " + e.err.Error() }

func produce(kind string) error {
	var open sync.Map
	answer, checkAnswer := contract.Env("RMQ_TX_ANSWER", "commit"), contract.Env("RMQ_TX_CHECK_ANSWER", "commit")
	options := []rmq.ProducerOption{rmq.WithTopics(os.Getenv("RMQ_TOPIC"))}
	if kind == "transaction" {
		options = append(options, rmq.WithTransactionChecker(&rmq.TransactionChecker{
			Check: func(mv *rmq.MessageView) rmq.TransactionResolution {
				contract.Emit("checked", map[string]any{"msgId": mv.GetMessageId(), "answer": checkAnswer})
				if checkAnswer != "unknown" {
					open.Delete(mv.GetMessageId())
				}
				return resolution(checkAnswer)
			}}))
	}
	producer, err := rmq.NewProducer(config(), options...)
	if err == nil {
		err = producer.Start()
	}
	if err != nil {
		return sdkError{"start", err}
	}
	defer producer.GracefulStop()
	contract.Emit("ready", map[string]any{})
	end, groups := contract.Deadline(), contract.Number("RMQ_MESSAGE_GROUPS", defaultMessageGroups)
	var pending sync.WaitGroup
	for i := 0; i < contract.Number("RMQ_COUNT", 1) && time.Now().Before(end); i++ {
		index, msg := i, message(i)
		var group any
		if kind == "fifo" {
			name := fmt.Sprintf("g%d", i%groups)
			msg.SetMessageGroup(name)
			group = name
		}
		if kind == "delay" {
			msg.SetDelayTimestamp(time.Now().Add(time.Duration(contract.Number("RMQ_DELAY_MS", 0)) * time.Millisecond))
		}
		report := func(receipts []*rmq.SendReceipt, err error) {
			if err != nil || len(receipts) == 0 {
				contract.Emit("error", map[string]any{"stage": "send", "message": fmt.Sprint(err)})
				return
			}
			contract.Emit("sent", map[string]any{"index": index, "msgId": receipts[0].MessageID, "status": nil,
				"group": group, "at": time.Now().UnixMilli()})
		}
		switch kind {
		case "async":
			pending.Add(1)
			producer.SendAsync(context.TODO(), msg, func(_ context.Context, receipts []*rmq.SendReceipt, err error) {
				defer pending.Done()
				report(receipts, err)
			})
		case "transaction":
			transaction := producer.BeginTransaction()
			receipts, err := producer.SendWithTransaction(context.TODO(), msg, transaction)
			if err == nil && answer == "unknown" && len(receipts) > 0 {
				open.Store(receipts[0].MessageID, true)
			} else if err == nil && answer == "commit" {
				err = transaction.Commit()
			} else if err == nil {
				err = transaction.RollBack()
			}
			report(receipts, err)
		default:
			report(producer.Send(context.TODO(), msg))
		}
	}
	pending.Wait()
	for time.Now().Before(end) {
		left := false
		open.Range(func(_, _ any) bool { left = true; return false })
		if !left {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Started RMQ_IDLE_S more: the SDK heartbeats 1 s after start, then every 10 s.
	time.Sleep(contract.IdleFor(end))
	return nil
}

// extendThenAck is consume-extend's settling: the delivery gets more time (its invisible duration changed),
// then is acked; the ack must carry the receipt handle that change answered, which the SDK keeps on the view.
func extendThenAck(consumer rmq.SimpleConsumer, mv *rmq.MessageView) error {
	if err := consumer.ChangeInvisibleDuration(mv, extendInvisible); err != nil {
		return err
	}
	return consumer.Ack(context.TODO(), mv)
}

// consumeSimple receives and acks; with nack, a first delivery's invisible duration is changed instead and
// only its redelivery is acked (and counted); with extend, each delivery is extended before its ack.
func consumeSimple(nack, extend bool) error {
	consumer, err := rmq.NewSimpleConsumer(config(), rmq.WithSimpleSubscriptionExpressions(subscriptions()),
		rmq.WithSimpleAwaitDuration(simpleAwait))
	if err == nil {
		err = consumer.Start()
	}
	if err != nil {
		return sdkError{"start", err}
	}
	defer consumer.GracefulStop()
	contract.Emit("ready", map[string]any{})
	end, done := contract.Deadline(), 0
	for done < contract.Number("RMQ_COUNT", 1) && time.Now().Before(end) {
		views, err := consumer.Receive(context.TODO(), receiveBatch, receiveInvisible)
		if err != nil && !strings.Contains(err.Error(), "MESSAGE_NOT_FOUND") {
			contract.Emit("error", map[string]any{"stage": "receive", "message": err.Error()})
			time.Sleep(time.Second)
		}
		for _, mv := range views {
			received(mv)
			if nack && mv.GetDeliveryAttempt() <= 1 {
				err = consumer.ChangeInvisibleDuration(mv, nackInvisible)
			} else if extend {
				err = extendThenAck(consumer, mv)
				done++
			} else {
				err = consumer.Ack(context.TODO(), mv)
				done++
			}
			if err != nil {
				contract.Emit("error", map[string]any{"stage": "settle", "message": err.Error()})
			}
		}
	}
	return nil
}

func pushConsumer(listener func(*rmq.MessageView)) (rmq.PushConsumer, error) {
	consumer, err := rmq.NewPushConsumer(config(), rmq.WithPushSubscriptionExpressions(subscriptions()),
		rmq.WithPushMessageListener(&rmq.FuncMessageListener{Consume: func(mv *rmq.MessageView) rmq.ConsumerResult {
			listener(mv)
			return rmq.SUCCESS
		}}))
	if err == nil {
		err = consumer.Start()
	}
	if err != nil {
		return nil, sdkError{"start", err}
	}
	return consumer, nil
}

func consumePush() error {
	var got atomic.Int32
	consumer, err := pushConsumer(func(mv *rmq.MessageView) { received(mv); got.Add(1) })
	if err != nil {
		return err
	}
	defer consumer.GracefulStop()
	contract.Emit("ready", map[string]any{})
	end := contract.Deadline()
	for int(got.Load()) < contract.Number("RMQ_COUNT", 1) && time.Now().Before(end) {
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// idle starts one producer and one push consumer, leaves them alone for wait and shuts them down.
func idle(wait time.Duration) error {
	producer, err := rmq.NewProducer(config(), rmq.WithTopics(os.Getenv("RMQ_TOPIC")))
	if err == nil {
		err = producer.Start()
	}
	if err != nil {
		return sdkError{"start", err}
	}
	consumer, err := pushConsumer(received)
	if err != nil {
		_ = producer.GracefulStop()
		return err
	}
	contract.Emit("ready", map[string]any{})
	if left := time.Until(contract.Deadline()); left < wait {
		wait = left
	}
	time.Sleep(wait)
	_ = consumer.GracefulStop()
	return producer.GracefulStop()
}

var scenarios = map[string]func() error{
	"produce": func() error { return produce("normal") }, "produce-async": func() error { return produce("async") },
	"produce-delay": func() error { return produce("delay") }, "produce-fifo": func() error { return produce("fifo") },
	"produce-transaction": func() error { return produce("transaction") },
	"consume-simple":      func() error { return consumeSimple(false, false) },
	"consume-pop":         func() error { return consumeSimple(false, false) },
	"consume-nack":        func() error { return consumeSimple(true, false) },
	"consume-extend":      func() error { return consumeSimple(false, true) },
	"consume-push":        consumePush,
	"idle":                func() error { return idle(contract.IdleFor(contract.Deadline())) },
	"shutdown":            func() error { return idle(0) },
}

func main() {
	scenario := ""
	if len(os.Args) > 1 {
		scenario = os.Args[1]
	}
	if protocol := contract.Env("RMQ_PROTOCOL", "grpc"); protocol != "grpc" {
		contract.Emit("unsupported", map[string]any{"reason": "a gRPC SDK does not speak " + protocol})
		os.Exit(contract.Unsupported)
	}
	run, ok := scenarios[scenario]
	if !ok {
		contract.Emit("unsupported", map[string]any{"reason": fmt.Sprintf("scenario %q is not offered by the Go SDK's driver", scenario)})
		os.Exit(contract.Unsupported)
	}
	rmq.EnableSsl = os.Getenv("RMQ_TLS") == "1"
	os.Setenv("mq.consoleAppender.enabled", "false")
	rmq.ResetLogger()
	if err := run(); err != nil { // what the SDK raised (a failed start, say) is an event
		contract.Emit("error", map[string]any{"stage": scenario, "message": err.Error()})
	}
	contract.Emit("done", map[string]any{})
	os.Exit(0)
}
