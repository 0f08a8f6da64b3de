package splitbrain

import (
	"encoding/json"
	"errors"
	"fmt"
)

// event is one line from the simulator: the fields of every event type, flattened.
type event struct {
	Type     string
	Protocol int64
	MonoNs   int64
	WallNs   int64
	Node     int
	Members  []int
	Service  int   // -1: null or absent
	Services []int // nil: absent (a simulator before clustered services)
	Seed     uint64
	Restart  bool
	Durable  json.RawMessage // nil: null or absent
	From     int
	Body     json.RawMessage
	Name     string
	Peer     int
	Op       string // conf_change's operation
	Step     int64  // -1: absent (protocol version 1)
}

var eventTypes = []string{"hello", "init", "message", "timer", "resign", "conf_change", "disconnect"}

// confOps are conf_change's operations.
var confOps = []string{"add", "remove", "add_learner", "promote"}

// parseEvent decodes an event line by hand: the simulator's events are small and
// flat, and this path runs once per event. Unknown fields are skipped (a later protocol
// version may add some). Body and Durable are copied out of line, which the caller reuses.
func parseEvent(line []byte, ev *event, timers []string) error {
	*ev = event{Service: -1, Step: -1}
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return errors.New("not a JSON object")
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return checkEnd(line, i+1)
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return errors.New("expected a field name")
		}
		end := skipString(line, i)
		if end < 0 {
			return errors.New("unterminated string")
		}
		key := line[i+1 : end-1]
		i = skipSpace(line, end)
		if i >= len(line) || line[i] != ':' {
			return errors.New("expected ':'")
		}
		i = skipSpace(line, i+1)
		vend := skipValue(line, i)
		if vend < 0 || vend == i {
			return fmt.Errorf("field %q: bad value", key)
		}
		v := line[i:vend]
		var err error
		switch string(key) {
		case "type":
			ev.Type, err = internString(v, eventTypes)
		case "protocol":
			ev.Protocol, err = parseInt(v)
		case "step":
			ev.Step, err = parseInt(v)
		case "mono_ns":
			ev.MonoNs, err = parseInt(v)
		case "wall_ns":
			ev.WallNs, err = parseInt(v)
		case "node":
			ev.Node, err = parseID(v)
		case "from":
			ev.From, err = parseID(v)
		case "peer":
			ev.Peer, err = parseID(v)
		case "service":
			if string(v) != "null" {
				ev.Service, err = parseID(v)
			}
		case "seed":
			ev.Seed, err = parseUint(v)
		case "restart":
			switch string(v) {
			case "true":
				ev.Restart = true
			case "false":
			default:
				err = errors.New("not a bool")
			}
		case "members":
			ev.Members, err = parseIDs(v)
		case "services":
			ev.Services, err = parseIDs(v)
		case "durable":
			if string(v) != "null" {
				ev.Durable, err = copyJSON(v)
			}
		case "body":
			ev.Body, err = copyJSON(v)
		case "name":
			ev.Name, err = internString(v, timers)
		case "op":
			ev.Op, err = internString(v, confOps)
		}
		if err != nil {
			return fmt.Errorf("field %q: %w", key, err)
		}
		i = skipSpace(line, vend)
		if i < len(line) && line[i] == ',' {
			i = skipSpace(line, i+1)
			continue
		}
		if i < len(line) && line[i] == '}' {
			return checkEnd(line, i+1)
		}
		return errors.New("expected ',' or '}'")
	}
}

func checkEnd(line []byte, i int) error {
	if skipSpace(line, i) != len(line) {
		return errors.New("text after the object")
	}
	return nil
}

// copyJSON checks that v is valid JSON and returns a copy of it.
func copyJSON(v []byte) (json.RawMessage, error) {
	if !json.Valid(v) {
		return nil, errors.New("invalid JSON")
	}
	return append(json.RawMessage(nil), v...), nil
}

// internString decodes the JSON string v, returning the matching element of known (no
// allocation) if there is one.
func internString(v []byte, known []string) (string, error) {
	if len(v) < 2 || v[0] != '"' {
		return "", errors.New("not a string")
	}
	inner := v[1 : len(v)-1]
	for _, k := range known {
		if string(inner) == k {
			return k, nil
		}
	}
	s, ok := unquote(v)
	if !ok {
		return "", errors.New("bad string")
	}
	return s, nil
}

func parseUint(v []byte) (uint64, error) {
	if len(v) == 0 || len(v) > 20 {
		return 0, errors.New("not an integer")
	}
	var n uint64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, errors.New("not an integer")
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, errors.New("integer out of range")
		}
		n = n*10 + d
	}
	return n, nil
}

func parseInt(v []byte) (int64, error) {
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	u, err := parseUint(v)
	if err != nil {
		return 0, err
	}
	if neg {
		if u > 1<<63 {
			return 0, errors.New("integer out of range")
		}
		return -int64(u), nil
	}
	if u > 1<<63-1 {
		return 0, errors.New("integer out of range")
	}
	return int64(u), nil
}

func parseID(v []byte) (int, error) {
	n, err := parseInt(v)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > 1<<31-1 {
		return 0, errors.New("not a node id")
	}
	return int(n), nil
}

// parseIDs decodes a JSON array of node ids.
func parseIDs(v []byte) ([]int, error) {
	if len(v) < 2 || v[0] != '[' {
		return nil, errors.New("not an array")
	}
	ids := make([]int, 0, 8)
	i := skipSpace(v, 1)
	if v[i] == ']' {
		return ids, nil
	}
	for {
		end := skipValue(v, i)
		if end <= i {
			return nil, errors.New("bad element")
		}
		id, err := parseID(v[i:end])
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
		i = skipSpace(v, end)
		if i < len(v) && v[i] == ',' {
			i = skipSpace(v, i+1)
			continue
		}
		if i == len(v)-1 && v[i] == ']' {
			return ids, nil
		}
		return nil, errors.New("bad array")
	}
}
