// Drives Apache RocketMQ's 5.x Go SDK (github.com/apache/rocketmq-clients/golang/v5, gRPC) from the command
// line with the same commands and JSON events as interop/sdk5/py_driver.py (see interop/sdk5/README.md).
// Built by interop/sdk5/install.py into the interop cache.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
)

var (
	out     = json.NewEncoder(os.Stdout)
	outLock sync.Mutex
)

func emit(event string, fields map[string]any) {
	fields["event"] = event
	outLock.Lock()
	defer outLock.Unlock()
	_ = out.Encode(fields)
}

func received(mv *rmq.MessageView) {
	keys := append([]string{}, mv.GetKeys()...)
	sort.Strings(keys)
	var delivery any
	if ts := mv.GetDeliveryTimestamp(); ts != nil {
		delivery = ts.UnixMilli()
	}
	emit("received", map[string]any{"messageId": mv.GetMessageId(), "topic": mv.GetTopic(), "tag": mv.GetTag(),
		"keys": keys, "group": mv.GetMessageGroup(), "body_b64": base64.StdEncoding.EncodeToString(mv.GetBody()),
		"attempt": mv.GetDeliveryAttempt(), "deliveryTimestamp": delivery, "at": time.Now().UnixMilli()})
}

type args struct {
	command, endpoint, topic, group, kind, resolution, check, ack string
	count, groups, waitChecks, expect, invisibleS                 int
	delayMs                                                       int64
	idleTimeout, timeout                                          float64
}

func produce(a args, cfg *rmq.Config) bool {
	var checks atomic.Int32
	options := []rmq.ProducerOption{rmq.WithTopics(a.topic)}
	if a.kind == "transaction" {
		options = append(options, rmq.WithTransactionChecker(&rmq.TransactionChecker{
			Check: func(mv *rmq.MessageView) rmq.TransactionResolution {
				checks.Add(1)
				emit("checked", map[string]any{"messageId": mv.GetMessageId(), "resolution": a.check})
				if a.check == "commit" {
					return rmq.COMMIT
				}
				return rmq.ROLLBACK
			}}))
	}
	producer, err := rmq.NewProducer(cfg, options...)
	if err == nil {
		err = producer.Start()
	}
	if err != nil {
		emit("error", map[string]any{"stage": "start", "message": err.Error()})
		return false
	}
	defer producer.GracefulStop()
	ok := true
	for i := 0; i < a.count; i++ {
		msg := &rmq.Message{Topic: a.topic, Body: []byte(fmt.Sprintf("%s-%d", a.kind, i))}
		msg.SetTag("sdk5")
		msg.SetKeys(fmt.Sprintf("k%d", i))
		var group any
		if a.kind == "fifo" {
			name := fmt.Sprintf("g%d", i%a.groups)
			msg.SetMessageGroup(name)
			group = name
		}
		if a.kind == "delay" {
			msg.SetDelayTimestamp(time.Now().Add(time.Duration(a.delayMs) * time.Millisecond))
		}
		var receipts []*rmq.SendReceipt
		if a.kind == "transaction" {
			transaction := producer.BeginTransaction()
			receipts, err = producer.SendWithTransaction(context.TODO(), msg, transaction)
			if err == nil && a.resolution == "commit" {
				err = transaction.Commit()
			} else if err == nil && a.resolution == "rollback" {
				err = transaction.RollBack()
			}
		} else {
			receipts, err = producer.Send(context.TODO(), msg)
		}
		if err != nil || len(receipts) == 0 {
			ok = false
			emit("error", map[string]any{"stage": "send", "index": i, "message": fmt.Sprint(err)})
			continue
		}
		emit("sent", map[string]any{"index": i, "messageId": receipts[0].MessageID, "group": group,
			"at": time.Now().UnixMilli()})
	}
	deadline := time.Now().Add(time.Duration(a.timeout * float64(time.Second)))
	for int(checks.Load()) < a.waitChecks && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if int(checks.Load()) < a.waitChecks {
		ok = false
		emit("error", map[string]any{"stage": "check", "message": fmt.Sprintf("%d of %d checks", checks.Load(), a.waitChecks)})
	}
	return ok
}

func receive(a args, cfg *rmq.Config) bool {
	consumer, err := rmq.NewSimpleConsumer(cfg, rmq.WithSimpleAwaitDuration(5*time.Second),
		rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{a.topic: rmq.SUB_ALL}))
	if err == nil {
		err = consumer.Start()
	}
	if err != nil {
		emit("error", map[string]any{"stage": "start", "message": err.Error()})
		return false
	}
	defer consumer.GracefulStop()
	count := 0
	deadline := time.Now().Add(time.Duration(a.timeout * float64(time.Second)))
	last := time.Now()
	idle := time.Duration(a.idleTimeout * float64(time.Second))
	for count < a.expect && time.Now().Before(deadline) && time.Since(last) < idle {
		views, _ := consumer.Receive(context.TODO(), 16, time.Duration(a.invisibleS)*time.Second)
		for _, mv := range views {
			last = time.Now()
			received(mv)
			count++
			if a.ack == "yes" {
				_ = consumer.Ack(context.TODO(), mv)
			}
		}
	}
	return count >= a.expect
}

func push(a args, cfg *rmq.Config) bool {
	var count atomic.Int32
	var last atomic.Int64
	last.Store(time.Now().UnixMilli())
	consumer, err := rmq.NewPushConsumer(cfg, rmq.WithPushAwaitDuration(5*time.Second),
		rmq.WithPushSubscriptionExpressions(map[string]*rmq.FilterExpression{a.topic: rmq.SUB_ALL}),
		rmq.WithPushMessageListener(&rmq.FuncMessageListener{Consume: func(mv *rmq.MessageView) rmq.ConsumerResult {
			received(mv)
			count.Add(1)
			last.Store(time.Now().UnixMilli())
			return rmq.SUCCESS
		}}))
	if err == nil {
		err = consumer.Start()
	}
	if err != nil {
		emit("error", map[string]any{"stage": "start", "message": err.Error()})
		return false
	}
	defer consumer.GracefulStop()
	deadline := time.Now().Add(time.Duration(a.timeout * float64(time.Second)))
	for int(count.Load()) < a.expect && time.Now().Before(deadline) &&
		float64(time.Now().UnixMilli()-last.Load()) < a.idleTimeout*1000 {
		time.Sleep(100 * time.Millisecond)
	}
	return int(count.Load()) >= a.expect
}

func main() {
	var a args
	a.command = os.Args[1]
	fs := flag.NewFlagSet(a.command, flag.ExitOnError)
	fs.StringVar(&a.endpoint, "endpoint", "", "")
	fs.StringVar(&a.topic, "topic", "", "")
	fs.StringVar(&a.group, "group", "sdk5-group", "")
	fs.StringVar(&a.kind, "kind", "normal", "")
	fs.StringVar(&a.resolution, "resolution", "commit", "")
	fs.StringVar(&a.check, "check", "commit", "")
	fs.StringVar(&a.ack, "ack", "yes", "")
	fs.IntVar(&a.count, "count", 1, "")
	fs.IntVar(&a.groups, "groups", 2, "")
	fs.IntVar(&a.waitChecks, "wait-checks", 0, "")
	fs.IntVar(&a.expect, "expect", 1, "")
	fs.IntVar(&a.invisibleS, "invisible-s", 20, "")
	fs.Int64Var(&a.delayMs, "delay-ms", 3000, "")
	fs.Float64Var(&a.idleTimeout, "idle-timeout", 20, "")
	fs.Float64Var(&a.timeout, "timeout", 60, "")
	_ = fs.Parse(os.Args[2:])
	rmq.EnableSsl = false
	os.Setenv("mq.consoleAppender.enabled", "false")
	rmq.ResetLogger()
	cfg := &rmq.Config{Endpoint: a.endpoint, ConsumerGroup: a.group, Credentials: &credentials.SessionCredentials{}}
	ok := map[string]func(args, *rmq.Config) bool{"produce": produce, "receive": receive, "push": push}[a.command](a, cfg)
	emit("done", map[string]any{"ok": ok})
	if ok {
		os.Exit(0)
	}
	os.Exit(1)
}
