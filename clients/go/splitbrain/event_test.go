package splitbrain

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestParseEvent(t *testing.T) {
	var ev event
	line := []byte(" { \"type\" : \"init\", \"future\": {\"a\":[1,\"}\"]}, \"node\":2,\"members\":[ 0 , 1,2 ]," +
		"\"service\":3,\"seed\":9007199254740991,\"restart\":true,\"durable\":{\"s\":\"x\\\"}\"}," +
		"\"mono_ns\":-5,\"wall_ns\":9223372036854775807,\"protocol\":1} \n")
	if err := parseEvent(line, &ev, nil); err != nil {
		t.Fatal(err)
	}
	want := event{Type: "init", Protocol: 1, Step: -1, MonoNs: -5, WallNs: 1<<63 - 1, Node: 2, Members: []int{0, 1, 2},
		Service: 3, Seed: 1<<53 - 1, Restart: true, Durable: json.RawMessage(`{"s":"x\"}"}`)}
	if fmt.Sprintf("%+v", ev) != fmt.Sprintf("%+v", want) {
		t.Fatalf("\n got %+v\nwant %+v", ev, want)
	}
	// The copies do not alias the line.
	line[len(line)-20] = 'X'
	if string(ev.Durable) != `{"s":"x\"}"}` {
		t.Fatalf("durable aliases the line: %s", ev.Durable)
	}

	if err := parseEvent([]byte(`{"type":"timer","name":"el\u0065ction","mono_ns":1}`), &ev, []string{"tick"}); err != nil ||
		ev.Name != "election" || ev.Service != -1 || ev.Durable != nil || ev.Members != nil {
		t.Fatalf("%v %+v", err, ev)
	}
	if err := parseEvent([]byte(`{"type":"init","service":null,"durable":null,"members":[]}`), &ev, nil); err != nil ||
		ev.Service != -1 || ev.Durable != nil || ev.Members == nil || len(ev.Members) != 0 {
		t.Fatalf("%v %+v", err, ev)
	}
	if err := parseEvent([]byte(`{}`), &ev, nil); err != nil || ev.Type != "" {
		t.Fatalf("%v %+v", err, ev)
	}
}

func TestParseEventRejects(t *testing.T) {
	for _, bad := range []string{
		``, `[]`, `{`, `{"type":"init"`, `{"type":"init"}x`, `{"type":1}`, `{"node":-1}`, `{"node":1.5}`,
		`{"mono_ns":9223372036854775808}`, `{"seed":-1}`, `{"seed":18446744073709551616}`, `{"restart":1}`,
		`{"members":[1,"a"]}`, `{"members":[1,]}`, `{"members":{}}`, `{"body":{"a":}}`, `{"durable":[1}`,
		`{"type":"init" "node":1}`, `{"type":"init",}`, `{type:"init"}`,
	} {
		var ev event
		if err := parseEvent([]byte(bad), &ev, nil); err == nil {
			t.Errorf("parseEvent(%s) accepted it: %+v", bad, ev)
		}
	}
}

func TestObjectType(t *testing.T) {
	for raw, want := range map[string]string{
		`{"type":"vote"}`: "vote",
		` { "a" : {"type":"no"}, "b":[1,"]"],"type" : "x\"y" }`: `x"y`,
		`{"a":"\"type\"","type":"ok"}`:                          "ok",
		`{"\u0074ype":"esc"}`:                                   "esc",
		`{"a":1}`:                                               "",
		`{"type":1}`:                                            "",
		`[{"type":"no"}]`:                                       "",
		`{}`:                                                    "",
	} {
		if got := objectType([]byte(raw)); got != want {
			t.Errorf("objectType(%s) = %q, want %q", raw, got, want)
		}
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\", "ctl\x00\x1f\n\t\r", "ünï€😀", "bad\xffutf8"} {
		got := appendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q -> %s: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("%q -> %s -> %q, want %q", s, got, back, wantBack)
		}
	}
}
