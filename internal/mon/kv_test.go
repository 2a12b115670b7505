package mon

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
)

// kvService is a small replicated service for testing the driver: a
// key-value map whose every change is a new epoch of service "osdmap"
// (so subscriptions carry it), with proposals checked against the epoch
// they were prepared on, as the contract requires.
type kvService struct {
	st     *monstore.Store
	epoch  uint64
	values map[string]string
	keep   uint64 // epochs of history to keep
}

func (s *kvService) Name() string { return osdmapService }

func (s *kvService) Load(st *monstore.Store) error {
	s.st, s.values = st, map[string]string{}
	_, last, err := st.Epochs(osdmapService)
	if err != nil {
		return err
	}
	s.epoch = last
	if last == 0 {
		return nil
	}
	full, err := st.Full(osdmapService, last)
	if err != nil {
		return err
	}
	return json.Unmarshal(full, &s.values)
}

func (s *kvService) Handles(prefix string) (bool, bool) {
	switch prefix {
	case "kv get", "kv stat":
		return true, false
	case "kv set":
		return true, true
	}
	return false, false
}

func (s *kvService) Query(cmd moncmd.Command) moncmd.Reply {
	if cmd.Prefix == "kv stat" {
		return moncmd.Reply{Text: fmt.Sprintf("%d keys, epoch %d", len(s.values), s.epoch), Data: []byte(strconv.FormatUint(s.epoch, 10))}
	}
	k, err := cmd.Str("key")
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL)
	}
	v, ok := s.values[k]
	if !ok {
		return moncmd.Errorf(moncmd.ENOENT, "no key %q", k)
	}
	return moncmd.Reply{Text: v}
}

func (s *kvService) Prepare(cmd moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	k, err := cmd.Str("key")
	if err != nil {
		return nil, moncmd.FromError(err, moncmd.EINVAL)
	}
	v := cmd.StrOr("value", "")
	if s.values[k] == v && v != "" {
		return nil, moncmd.Reply{Status: "unchanged"}
	}
	p := binary.BigEndian.AppendUint64(nil, s.epoch)
	return append(p, fmt.Sprintf("%s=%s", k, v)...), moncmd.Reply{}
}

func (s *kvService) Apply(b *monstore.Batch, prop []byte, _ time.Time) (moncmd.Reply, error) {
	if len(prop) < 8 || binary.BigEndian.Uint64(prop) != s.epoch {
		return moncmd.Errorf(moncmd.EAGAIN, "prepared on another epoch"), nil
	}
	var k, v string
	for i, c := range prop[8:] {
		if c == '=' {
			k, v = string(prop[8:8+i]), string(prop[9+i:])
			break
		}
	}
	s.values[k] = v
	s.epoch++
	full, _ := json.Marshal(s.values)
	if err := b.PutEpoch(osdmapService, s.epoch, []byte(k+"="+v), full); err != nil {
		return moncmd.Reply{}, err
	}
	if s.keep > 0 && s.epoch > s.keep {
		if err := b.Trim(osdmapService, s.epoch-s.keep+1); err != nil {
			return moncmd.Reply{}, err
		}
	}
	return moncmd.Reply{Status: fmt.Sprintf("set %s, epoch %d", k, s.epoch)}, nil
}

func (s *kvService) Tick(time.Time) []moncmd.Command { return nil }
