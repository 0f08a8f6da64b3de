package etcdraft

import (
	"encoding/json"
	"fmt"
	"math"

	"splitbrain.dev/etcdraft/raftlib"
)

// durable is what a node persists: its raft.MemoryStorage as etcd's WAL would hold it, the
// HardState, every log entry and the snapshot if there is one (each protobuf-marshalled;
// base64 in JSON). The whole log goes into every persist: a leader here proposes nothing,
// so the log only holds the bootstrap's configuration changes and one empty entry per
// elected leader, a few hundred bytes. The ConfState is not stored apart: no snapshot is
// ever taken (nothing compacts the log), so the configuration is the log's conf-change
// entries, which the library hands back as committed entries after a restart (Applied
// is 0) and the adapter applies again, as etcd does when it replays its WAL.
type durable struct {
	HardState []byte   `json:"hard_state"`
	Entries   [][]byte `json:"entries"`
	Snapshot  []byte   `json:"snapshot,omitempty"`
}

// save reads the storage into its durable form.
func save(ms *raftlib.MemoryStorage) (durable, error) {
	var d durable
	hs, _, err := ms.InitialState()
	if err != nil {
		return d, err
	}
	if d.HardState, err = hs.Marshal(); err != nil {
		return d, err
	}
	snap, err := ms.Snapshot()
	if err != nil {
		return d, err
	}
	if !raftlib.IsEmptySnap(snap) {
		if d.Snapshot, err = snap.Marshal(); err != nil {
			return d, err
		}
	}
	first, err := ms.FirstIndex()
	if err != nil {
		return d, err
	}
	last, err := ms.LastIndex()
	if err != nil {
		return d, err
	}
	if last >= first {
		ents, err := ms.Entries(first, last+1, math.MaxUint64)
		if err != nil {
			return d, err
		}
		d.Entries = make([][]byte, len(ents))
		for i := range ents {
			if d.Entries[i], err = ents[i].Marshal(); err != nil {
				return d, err
			}
		}
	}
	return d, nil
}

// restore loads a durable state into an empty storage.
func restore(raw json.RawMessage, ms *raftlib.MemoryStorage) error {
	var d durable
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("durable state: %w", err)
	}
	if len(d.Snapshot) > 0 {
		var snap raftlib.Snapshot
		if err := snap.Unmarshal(d.Snapshot); err != nil {
			return fmt.Errorf("durable snapshot: %w", err)
		}
		if err := ms.ApplySnapshot(snap); err != nil {
			return err
		}
	}
	var hs raftlib.HardState
	if err := hs.Unmarshal(d.HardState); err != nil {
		return fmt.Errorf("durable hard state: %w", err)
	}
	if err := ms.SetHardState(hs); err != nil {
		return err
	}
	ents := make([]raftlib.Entry, len(d.Entries))
	for i, b := range d.Entries {
		if err := ents[i].Unmarshal(b); err != nil {
			return fmt.Errorf("durable entry %d: %w", i, err)
		}
	}
	return ms.Append(ents)
}
