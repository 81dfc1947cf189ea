// Package contract is the client-driver contract of `rmq-conformance client` (docs/clients.md) as the
// project's Go drivers share it: the JSON events on stdout and the RMQ_* settings. Each driver is a module
// of its own, pinned to its client; both require this one through a local replace directive, so the
// contract's reading is written once.
package contract

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Unsupported is the exit status of a scenario the driver does not offer.
const Unsupported = 3

// ShutdownMargin is the part of the budget left for the client to shut down.
const ShutdownMargin = 5 * time.Second

var (
	out     = json.NewEncoder(os.Stdout)
	outLock sync.Mutex
)

// Emit writes one event line; callbacks of the client's own goroutines may emit at the same time.
func Emit(event string, fields map[string]any) {
	fields["event"] = event
	outLock.Lock()
	defer outLock.Unlock()
	_ = out.Encode(fields)
}

// Env is the variable, or fallback when it is absent or empty (the suite leaves optional ones out).
func Env(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// Number is an integer variable, or fallback when it is absent or not a number.
func Number(name string, fallback int) int {
	value, err := strconv.Atoi(Env(name, strconv.Itoa(fallback)))
	if err != nil {
		return fallback
	}
	return value
}

// Deadline is when the scenario stops, leaving the client ShutdownMargin (or half a short budget) to shut
// down before the suite's RMQ_TIMEOUT_S runs out.
func Deadline() time.Time {
	total, err := strconv.ParseFloat(Env("RMQ_TIMEOUT_S", "60"), 64)
	if err != nil {
		total = 60
	}
	budget := time.Duration(total * float64(time.Second))
	if budget-ShutdownMargin > budget/2 {
		return time.Now().Add(budget - ShutdownMargin)
	}
	return time.Now().Add(budget / 2)
}

// IdleFor is RMQ_IDLE_S (fractions allowed), cut to what is left before end.
func IdleFor(end time.Time) time.Duration {
	seconds, err := strconv.ParseFloat(Env("RMQ_IDLE_S", "0"), 64)
	if err != nil {
		seconds = 0
	}
	wait := time.Duration(seconds * float64(time.Second))
	if left := time.Until(end); left < wait {
		wait = left
	}
	return wait
}

// Body is RMQ_BODY_B64 when set, else the index in decimal and a dash, padded with 'x' to RMQ_BODY_SIZE.
func Body(index int) []byte {
	if exact := os.Getenv("RMQ_BODY_B64"); exact != "" {
		decoded, _ := base64.StdEncoding.DecodeString(exact)
		return decoded
	}
	text := fmt.Sprintf("%d-", index)
	if size := Number("RMQ_BODY_SIZE", 16); len(text) < size {
		text += strings.Repeat("x", size-len(text))
	}
	return []byte(text)
}

// Client is what every client of the drivers has: a start and a shutdown.
type Client interface {
	Start() error
	Shutdown() error
}

// StartError is a client that could not be built or started; the driver reports it as an error event.
type StartError struct{ Err error }

func (e StartError) Error() string { return "start: " + e.Err.Error() }

// Started is client, made by a constructor that answered err, once started.
func Started[C Client](client C, err error) (C, error) {
	if err == nil {
		err = client.Start()
	}
	if err != nil {
		return client, StartError{err}
	}
	return client, nil
}

// Run starts the client newClient makes, emits ready, runs scenario with it and shuts the client down: the
// shape of every scenario, written once. The scenario's error comes first, else the shutdown's.
func Run[C Client](newClient func() (C, error), scenario func(C) error) error {
	client, err := Started(newClient())
	if err != nil {
		return err
	}
	Emit("ready", map[string]any{})
	err = scenario(client)
	if stopped := client.Shutdown(); err == nil {
		err = stopped
	}
	return err
}
