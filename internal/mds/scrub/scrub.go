// Package scrub checks a file system's namespace objects against each
// other, offline (`cuttle fs scrub`): it reads the metadata pool (and the
// data pools' first objects, for backtraces) directly, walks the
// namespace from the root through the directory fragment objects, and
// reports every inconsistency it finds as a Problem naming the object,
// what is wrong and what to do. It owns the checks, not the repairs: it
// writes nothing (docs/MDS.md, "Damage and scrub").
package scrub

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/mds/journal"
	"github.com/cuttlestore/cuttle/internal/mds/mdstore"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// Kind classifies a Problem.
type Kind string

// The kinds of damage a scrub reports.
const (
	// DamagedObject: a fragment's header, stamp or backtrace, a base
	// inode or an inode table does not decode.
	DamagedObject Kind = "damaged_object"
	// DamagedDentry: an omap key or value of a fragment does not decode,
	// or its inode is invalid.
	DamagedDentry Kind = "damaged_dentry"
	// MissingDirfrag: a directory's fragment object does not exist.
	MissingDirfrag Kind = "missing_dirfrag"
	// OrphanDirfrag: a fragment object no directory reaches.
	OrphanDirfrag Kind = "orphan_dirfrag"
	// DirLinkCount: a directory's link count is not 2 plus its
	// subdirectories.
	DirLinkCount Kind = "dir_link_count"
	// FragStats: a fragment header's file and subdirectory counts
	// disagree with its dentries.
	FragStats Kind = "frag_stats"
	// LinkCount: a file's link count is not its dentries' count (its
	// primary one, unless it is a stray, plus its remote ones).
	LinkCount Kind = "link_count"
	// DanglingRemote: a remote dentry (hard link) names an inode no
	// primary dentry holds.
	DanglingRemote Kind = "dangling_remote"
	// DuplicateIno: two primary dentries hold the same inode number.
	DuplicateIno Kind = "duplicate_ino"
	// InoNotAllocated: an inode number the inode table holds free.
	InoNotAllocated Kind = "ino_not_allocated"
	// BadBacktrace: a backtrace that does not lead to its primary
	// dentry; MissingBacktrace: none where one should be.
	BadBacktrace     Kind = "bad_backtrace"
	MissingBacktrace Kind = "missing_backtrace"
	// DataPastEOF: a data object beyond the file's size exists
	// (reported only: a truncation not finished).
	DataPastEOF Kind = "data_past_eof"
	// JournalNotFlushed: a rank's journal holds events past its expire
	// position, so the objects are not complete: the scrub's findings
	// may be false.
	JournalNotFlushed Kind = "journal_not_flushed"
)

// Problem is one inconsistency.
type Problem struct {
	Kind Kind `json:"kind"`
	// Object and Pool name the RADOS object the problem is in.
	Object string `json:"object"`
	Pool   int64  `json:"pool"`
	// Ino and Path are the inode concerned and its path, where known.
	Ino    mdtypes.Ino `json:"ino,omitempty"`
	Path   string      `json:"path,omitempty"`
	Detail string      `json:"detail"`
	// Advice says what to do.
	Advice string `json:"advice"`
	// Repairable says Repair can fix it (an orphan fragment, a
	// directory's link count).
	Repairable bool `json:"repairable,omitempty"`
	repair     func(context.Context) error
}

func (p Problem) String() string {
	where := p.Object
	if p.Path != "" {
		where += " (" + p.Path + ")"
	}
	return fmt.Sprintf("%s: %s: %s; %s", where, p.Kind, p.Detail, p.Advice)
}

// Report is a scrub's result.
type Report struct {
	// Path is the subtree scrubbed ("/" for the whole file system).
	Path string `json:"path"`
	// Dirs, Files and Dentries count what the walk reached; Objects the
	// metadata pool's objects listed.
	Dirs     int       `json:"dirs"`
	Files    int       `json:"files"`
	Remotes  int       `json:"remote_dentries"`
	Frags    int       `json:"frags"`
	Objects  int       `json:"objects"`
	Problems []Problem `json:"problems"`
	// Skipped names the checks a subtree scrub leaves out.
	Skipped []string `json:"skipped,omitempty"`
}

// Clean reports whether no problem was found.
func (r *Report) Clean() bool { return len(r.Problems) == 0 }

// Summary is the report's one line.
func (r *Report) Summary() string {
	s := fmt.Sprintf("scrub of %s: %d directories, %d files, %d hard links in %d fragments (%d metadata objects): ",
		r.Path, r.Dirs, r.Files, r.Remotes, r.Frags, r.Objects)
	if r.Clean() {
		s += "clean"
	} else {
		s += fmt.Sprintf("%d problem%s", len(r.Problems), map[bool]string{true: "s"}[len(r.Problems) != 1])
	}
	if len(r.Skipped) > 0 {
		s += " (not checked: " + strings.Join(r.Skipped, ", ") + ")"
	}
	return s
}

// Config says what to scrub.
type Config struct {
	// Conn opens the data pools (for files' backtraces).
	Conn *rados.Conn
	// Meta is the metadata pool.
	Meta *rados.IOContext
	// Path is the subtree to scrub (default "/"). A subtree scrub does
	// not look for orphan fragments nor count hard links, which need
	// the whole namespace.
	Path string
}

// omapBatch is how many omap entries one read asks for.
const omapBatch = 1024

// primary is where an inode's primary dentry was found.
type primary struct {
	in     *mdtypes.Inode
	dir    mdtypes.Ino
	name   string
	path   string
	object string
	stray  bool
}

// remote is a remote dentry: its path and fragment object.
type remote struct{ path, object string }

type scrubber struct {
	cfg        Config
	rep        *Report
	objects    map[string]bool // the metadata pool's objects
	reached    map[string]bool // fragment objects the walk read
	tables     map[int]*mdtypes.InoTable
	inos       map[mdtypes.Ino]*primary
	remotes    map[mdtypes.Ino][]remote // a remote dentry's target: the dentries naming it
	incomplete bool                     // a fragment could not be read whole
	data       map[int64]*rados.IOContext
}

// Run scrubs the file system in cfg.Meta. It returns an error only when
// it cannot read (the pool unreachable); damage is in the Report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Path == "" {
		cfg.Path = "/"
	}
	cfg.Path = path.Clean("/" + cfg.Path)
	s := &scrubber{cfg: cfg, rep: &Report{Path: cfg.Path, Problems: []Problem{}}, objects: map[string]bool{}, reached: map[string]bool{},
		tables: map[int]*mdtypes.InoTable{}, inos: map[mdtypes.Ino]*primary{}, remotes: map[mdtypes.Ino][]remote{},
		data: map[int64]*rados.IOContext{cfg.Meta.PoolID(): cfg.Meta}}
	for e, err := range cfg.Meta.Objects(ctx) {
		if err != nil {
			return nil, fmt.Errorf("scrub: list pool %q: %w", cfg.Meta.PoolName(), err)
		}
		if e.Namespace == "" {
			s.objects[e.Name] = true
		}
	}
	s.rep.Objects = len(s.objects)
	var ranks []int
	for name := range s.objects {
		if r, ok := strings.CutPrefix(name, "mds"); ok {
			if r, ok := strings.CutSuffix(r, "_inotable"); ok {
				if n, err := strconv.Atoi(r); err == nil && n >= 0 && n < mdtypes.MaxRank {
					ranks = append(ranks, n)
				}
			}
		}
	}
	sort.Ints(ranks)
	for _, r := range ranks {
		if err := s.checkRank(ctx, r); err != nil {
			return nil, err
		}
	}
	whole := cfg.Path == "/"
	if whole {
		if err := s.walkBase(ctx, mdtypes.RootIno, "/"); err != nil {
			return nil, err
		}
		for _, r := range ranks {
			if err := s.walkBase(ctx, mdtypes.MDSDirIno(r), fmt.Sprintf("~mds%d", r)); err != nil {
				return nil, err
			}
		}
	} else {
		in, err := s.resolve(ctx, cfg.Path)
		if err != nil {
			return nil, err
		}
		if in != nil {
			if err := s.walk(ctx, in, cfg.Path); err != nil {
				return nil, err
			}
		}
		s.rep.Skipped = []string{"orphan fragments (subtree)", "hard links (subtree)"}
	}
	if err := s.checkInodes(ctx, whole); err != nil {
		return nil, err
	}
	if whole {
		s.checkOrphans(ctx)
	}
	sort.SliceStable(s.rep.Problems, func(i, j int) bool {
		a, b := s.rep.Problems[i], s.rep.Problems[j]
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		return a.Kind < b.Kind
	})
	return s.rep, nil
}

func (s *scrubber) add(p Problem) {
	if p.Pool == 0 && p.Object != "" && s.objects[p.Object] {
		p.Pool = s.cfg.Meta.PoolID()
	}
	s.rep.Problems = append(s.rep.Problems, p)
}

// checkRank reads rank r's inode table and journal.
func (s *scrubber) checkRank(ctx context.Context, r int) error {
	obj := mdtypes.InoTableObject(r)
	b, err := s.cfg.Meta.Read(ctx, obj, 0, 1<<24)
	if err != nil {
		return fmt.Errorf("scrub: read %q: %w", obj, err)
	}
	t, err := mdtypes.UnmarshalInoTable(b)
	if err == nil && t.Rank != r {
		err = fmt.Errorf("table of rank %d", t.Rank)
	}
	if err != nil {
		s.add(Problem{Kind: DamagedObject, Object: obj, Pool: s.cfg.Meta.PoolID(), Detail: "inode table: " + err.Error(),
			Advice: "inode numbers cannot be checked against it; the rank's MDS will refuse to start: restore the table"})
	} else {
		s.tables[r] = t
	}
	ino := uint64(mdtypes.JournalIno(r))
	n := 0
	_, err = journal.Replay(ctx, s.cfg.Meta, ino, func(journal.Entry) error { n++; return nil })
	switch {
	case errors.Is(err, rados.ErrNotFound):
	case errors.Is(err, journal.ErrDamaged) || errors.Is(err, journal.ErrBadHeader):
		s.add(Problem{Kind: DamagedObject, Object: fmt.Sprintf("%x.00000000", ino), Pool: s.cfg.Meta.PoolID(),
			Detail: fmt.Sprintf("rank %d's journal: %v", r, err),
			Advice: "the rank is damaged; its unflushed changes are lost: cuttle mds repaired FS:RANK after restoring"})
	case err != nil:
		return fmt.Errorf("scrub: rank %d's journal: %w", r, err)
	case n > 0:
		s.add(Problem{Kind: JournalNotFlushed, Object: fmt.Sprintf("%x.00000000", ino), Pool: s.cfg.Meta.PoolID(),
			Detail: fmt.Sprintf("rank %d's journal holds %d events not yet written back", r, n),
			Advice: "the objects are incomplete and findings may be false: start an MDS for the rank (it replays and writes back), take the file system down (cuttle fs fail), scrub again"})
	}
	return nil
}

// walkBase walks a base directory from its inode object.
func (s *scrubber) walkBase(ctx context.Context, ino mdtypes.Ino, p string) error {
	obj := mdtypes.BaseInodeObject(ino)
	if !s.objects[obj] {
		if ino != mdtypes.RootIno {
			return nil // a rank never created
		}
		s.add(Problem{Kind: MissingDirfrag, Object: obj, Ino: ino, Path: p, Detail: "the root inode's object is missing",
			Advice: "start an MDS: it recreates the root (its entries are found again only if its fragment is intact)"})
		return nil
	}
	b, err := s.cfg.Meta.Read(ctx, obj, 0, 1<<24)
	if err != nil {
		return fmt.Errorf("scrub: read %q: %w", obj, err)
	}
	in, err := mdtypes.UnmarshalInode(b)
	if err == nil && in.Ino != ino {
		err = fmt.Errorf("holds inode %v", in.Ino)
	}
	if err != nil {
		s.add(Problem{Kind: DamagedObject, Object: obj, Ino: ino, Path: p, Detail: "base inode: " + err.Error(),
			Advice: "restore the object; the MDS cannot start without it"})
		return nil
	}
	return s.walk(ctx, in, p)
}

// resolve finds the directory at p by reading the fragments on the way.
func (s *scrubber) resolve(ctx context.Context, p string) (*mdtypes.Inode, error) {
	b, err := s.cfg.Meta.Read(ctx, mdtypes.BaseInodeObject(mdtypes.RootIno), 0, 1<<24)
	if err != nil {
		return nil, fmt.Errorf("scrub: read the root inode: %w", err)
	}
	in, err := mdtypes.UnmarshalInode(b)
	if err != nil {
		return nil, fmt.Errorf("scrub: the root inode does not decode (scrub the whole file system): %w", err)
	}
	for _, name := range strings.Split(strings.Trim(p, "/"), "/") {
		if !in.IsDir() {
			return nil, fmt.Errorf("scrub: %s: a component is not a directory (ENOTDIR)", p)
		}
		f, err := mdtypes.FragOf(in.Leaves(), name)
		if err != nil {
			return nil, fmt.Errorf("scrub: %s: %w", p, err)
		}
		obj := mdtypes.DirfragObject(in.Ino, f)
		vals, err := s.cfg.Meta.GetOmapValuesByKeys(ctx, obj, mdtypes.DentryKey(name))
		if err != nil {
			return nil, fmt.Errorf("scrub: %s: read %q: %w", p, obj, err)
		}
		v, ok := vals[mdtypes.DentryKey(name)]
		if !ok {
			return nil, fmt.Errorf("scrub: %s: no entry %q in %q (ENOENT)", p, name, obj)
		}
		d, err := mdtypes.UnmarshalDentry(name, v)
		if err != nil || d.IsRemote() {
			return nil, fmt.Errorf("scrub: %s: entry %q in %q is damaged or a hard link: scrub its parent", p, name, obj)
		}
		in = d.Inode
	}
	if !in.IsDir() {
		return nil, fmt.Errorf("scrub: %s is not a directory (ENOTDIR)", p)
	}
	return in, nil
}

// walk checks directory in (at path p) and everything beneath it.
func (s *scrubber) walk(ctx context.Context, in *mdtypes.Inode, p string) error {
	type dirAt struct {
		in *mdtypes.Inode
		p  string
	}
	queue := []dirAt{{in, p}}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		subdirs, err := s.checkDir(ctx, d.in, d.p, func(sub *mdtypes.Inode, sp string) { queue = append(queue, dirAt{sub, sp}) })
		if err != nil {
			return err
		}
		s.rep.Dirs++
		if subdirs >= 0 && uint64(d.in.Nlink) != 2+uint64(subdirs) {
			s.add(Problem{Kind: DirLinkCount, Object: s.primaryObject(d.in.Ino), Ino: d.in.Ino, Path: d.p,
				Detail: fmt.Sprintf("link count %d, but %d subdirectories make %d", d.in.Nlink, subdirs, 2+subdirs),
				Advice: "stat shows a wrong count: fs scrub --repair sets it", Repairable: true,
				repair: s.fixDirLinks(d.in.Ino, uint32(2+subdirs))})
		}
	}
	return nil
}

// primaryObject names the object holding ino's inode.
func (s *scrubber) primaryObject(ino mdtypes.Ino) string {
	if p := s.inos[ino]; p != nil {
		return p.object
	}
	return mdtypes.BaseInodeObject(ino)
}

// checkDir reads and checks every fragment of directory in, passing its
// subdirectories to sub. It returns how many subdirectories it has, or
// -1 when a fragment could not be read whole.
func (s *scrubber) checkDir(ctx context.Context, in *mdtypes.Inode, p string, sub func(*mdtypes.Inode, string)) (int, error) {
	subdirs := 0
	for _, f := range in.Leaves() {
		n, err := s.checkFrag(ctx, in, f, p, sub)
		if err != nil {
			return 0, err
		}
		if n < 0 || subdirs < 0 {
			subdirs = -1
		} else {
			subdirs += n
		}
	}
	return subdirs, nil
}

func (s *scrubber) checkFrag(ctx context.Context, dir *mdtypes.Inode, f mdtypes.Frag, p string, sub func(*mdtypes.Inode, string)) (int, error) {
	obj := mdtypes.DirfragObject(dir.Ino, f)
	if !s.objects[obj] {
		s.add(Problem{Kind: MissingDirfrag, Object: obj, Ino: dir.Ino, Path: p,
			Detail: fmt.Sprintf("fragment %v of directory %v is missing", f, dir.Ino),
			Advice: "the MDS answers EIO in this directory; its entries are lost: restore the object, or remove the directory's dentry from its parent"})
		s.incomplete = true
		return -1, nil
	}
	s.reached[obj] = true
	s.rep.Frags++
	r := rados.NewReadOp()
	attrs := r.GetXattrs()
	hdrStep := r.GetOmapHeader()
	if err := s.cfg.Meta.OperateRead(ctx, obj, r); err != nil {
		return 0, fmt.Errorf("scrub: read %q: %w", obj, err)
	}
	complete := true
	hdr, err := mdtypes.UnmarshalFragHeader(hdrStep.Data)
	if err != nil {
		complete = false
		s.add(Problem{Kind: DamagedObject, Object: obj, Ino: dir.Ino, Path: p, Detail: "omap header: " + err.Error(),
			Advice: "the MDS answers EIO in this directory: restore the object (its dentries may be intact)"})
	}
	if raw, ok := attrs.Attrs[mdstore.GuardXattr]; ok && len(raw) != 16 {
		s.add(Problem{Kind: DamagedObject, Object: obj, Ino: dir.Ino, Path: p, Detail: fmt.Sprintf("xattr %s of %d bytes, want 16", mdstore.GuardXattr, len(raw)),
			Advice: "the MDS answers EIO in this directory: restore the object"})
	}
	if !mdtypes.IsBase(dir.Ino) && f == mdtypes.RootFrag {
		s.checkBacktrace(dir, attrs.Attrs[mdtypes.BacktraceXattr], obj, s.cfg.Meta.PoolID())
	}
	var files, subdirs uint64
	after := ""
	for {
		kvs, more, err := s.cfg.Meta.GetOmapValues(ctx, obj, after, "", omapBatch)
		if err != nil {
			return 0, fmt.Errorf("scrub: read %q: %w", obj, err)
		}
		for _, kv := range kvs {
			bad := func(err error) {
				complete = false
				s.add(Problem{Kind: DamagedDentry, Object: obj, Ino: dir.Ino, Path: p,
					Detail: fmt.Sprintf("omap key %q: %v", kv.Key, err),
					Advice: "the MDS answers EIO in this directory: remove the key (rados rmomapkey) to give up that entry, or restore the object"})
			}
			name, err := mdtypes.NameOfKey(kv.Key)
			if err != nil {
				bad(err)
				continue
			}
			d, err := mdtypes.UnmarshalDentry(name, kv.Value)
			if err == nil && d.Inode != nil {
				err = d.Inode.Validate()
			}
			if err == nil {
				if fo, ferr := mdtypes.FragOf(dir.Leaves(), name); ferr != nil || fo != f {
					err = fmt.Errorf("the name belongs in fragment %v, not %v", fo, f)
				}
			}
			if err != nil {
				bad(err)
				continue
			}
			cp := path.Join(p, name)
			if d.IsRemote() {
				s.rep.Remotes++
				s.remotes[d.RemoteIno] = append(s.remotes[d.RemoteIno], remote{cp, obj})
				if mdtypes.ModeOfDType(d.RemoteType) == mdtypes.ModeDir {
					subdirs++
				} else {
					files++
				}
				continue
			}
			s.checkPrimary(dir, d, obj, cp)
			if d.Inode.IsDir() {
				subdirs++
				if s.inos[d.Inode.Ino].in == d.Inode {
					sub(d.Inode, cp)
				}
			} else {
				files++
				s.rep.Files++
			}
		}
		if !more || len(kvs) == 0 {
			break
		}
		after = kvs[len(kvs)-1].Key
	}
	if complete && (hdr.Files != files || hdr.Subdirs != subdirs) {
		s.add(Problem{Kind: FragStats, Object: obj, Ino: dir.Ino, Path: p,
			Detail: fmt.Sprintf("header counts %d files and %d subdirectories, the dentries %d and %d", hdr.Files, hdr.Subdirs, files, subdirs),
			Advice: "statistics only (df, quotas): they are rewritten by the next change in the directory"})
	}
	if !complete {
		s.incomplete = true
		return -1, nil
	}
	return int(subdirs), nil
}

// checkPrimary records a primary dentry's inode and checks its number.
func (s *scrubber) checkPrimary(dir *mdtypes.Inode, d *mdtypes.Dentry, obj, p string) {
	in := d.Inode
	ino := in.Ino
	stray := ino >= mdtypes.StrayIno(0, 0) && dir.Ino >= mdtypes.MDSDirIno(0) && dir.Ino < mdtypes.MDSDirIno(mdtypes.MaxRank)
	isStrayChild := dir.Ino >= mdtypes.StrayIno(0, 0) && dir.Ino < mdtypes.StrayIno(mdtypes.MaxRank, 0)
	if prev := s.inos[ino]; prev != nil {
		s.add(Problem{Kind: DuplicateIno, Object: obj, Ino: ino, Path: p,
			Detail: fmt.Sprintf("inode %v is also the primary dentry %s in %s", ino, prev.path, prev.object),
			Advice: "two files share one number: copy one away with the MDS up and remove it"})
		return
	}
	s.inos[ino] = &primary{in: in, dir: dir.Ino, name: d.Name, path: p, object: obj, stray: isStrayChild}
	if mdtypes.IsSystem(ino) {
		if !stray {
			s.add(Problem{Kind: DamagedDentry, Object: obj, Ino: ino, Path: p,
				Detail: fmt.Sprintf("inode number %v is a system number, not an allocated one", ino),
				Advice: "the dentry is corrupt: remove its omap key (rados rmomapkey) or restore the object"})
		}
		return
	}
	rank := int(uint64(ino)>>40) - 1
	t := s.tables[rank]
	switch {
	case rank < 0 || rank >= mdtypes.MaxRank:
		s.add(Problem{Kind: DamagedDentry, Object: obj, Ino: ino, Path: p,
			Detail: fmt.Sprintf("inode number %v is beyond every rank's range", ino),
			Advice: "the dentry is corrupt: remove its omap key (rados rmomapkey) or restore the object"})
	case t != nil && t.IsFree(ino):
		s.add(Problem{Kind: InoNotAllocated, Object: obj, Ino: ino, Path: p,
			Detail: fmt.Sprintf("inode number %v is free in %s", ino, mdtypes.InoTableObject(rank)),
			Advice: "the MDS may hand the number out again: copy the file away and remove it with the MDS up"})
	}
}

// checkBacktrace checks the backtrace raw of in, found on obj in pool.
func (s *scrubber) checkBacktrace(in *mdtypes.Inode, raw []byte, obj string, pool int64) {
	pr := s.inos[in.Ino]
	if pr == nil || pr.stray || strings.HasPrefix(pr.path, "~mds") {
		return // strays keep their old backtraces until purged
	}
	if raw == nil {
		s.add(Problem{Kind: MissingBacktrace, Object: obj, Pool: pool, Ino: in.Ino, Path: pr.path,
			Detail: "no backtrace (xattr " + mdtypes.BacktraceXattr + ")",
			Advice: "hard links to it cannot be followed after a cache miss: rename it and back with the MDS up"})
		return
	}
	bt, err := mdtypes.UnmarshalBacktrace(raw)
	if err == nil && bt.Ino != in.Ino {
		err = fmt.Errorf("names inode %v", bt.Ino)
	}
	if err != nil {
		s.add(Problem{Kind: DamagedObject, Object: obj, Pool: pool, Ino: in.Ino, Path: pr.path,
			Detail: "backtrace: " + err.Error(), Advice: "rename the file and back with the MDS up to rewrite it"})
		return
	}
	if len(bt.Ancestors) == 0 || bt.Ancestors[0].DirIno != pr.dir || bt.Ancestors[0].Name != pr.name {
		got := "nothing"
		if len(bt.Ancestors) > 0 {
			got = fmt.Sprintf("%q in %v", bt.Ancestors[0].Name, bt.Ancestors[0].DirIno)
		}
		s.add(Problem{Kind: BadBacktrace, Object: obj, Pool: pool, Ino: in.Ino, Path: pr.path,
			Detail: fmt.Sprintf("backtrace leads to %s, the primary dentry is %q in %v", got, pr.name, pr.dir),
			Advice: "hard links to it may not be found after a cache miss: rename it and back with the MDS up"})
	}
}

// checkInodes checks what needs every inode seen: hard links' targets
// and link counts (whole only), files' backtraces and data objects.
func (s *scrubber) checkInodes(ctx context.Context, whole bool) error {
	if whole && s.incomplete {
		// A damaged fragment hides primary dentries: hard links to
		// them would look dangling and their files' counts wrong.
		whole = false
		s.rep.Skipped = append(s.rep.Skipped, "hard links (a damaged fragment hides dentries)")
	}
	if whole {
		for ino, rs := range s.remotes {
			if s.inos[ino] == nil {
				for _, r := range rs {
					s.add(Problem{Kind: DanglingRemote, Object: r.object, Ino: ino, Path: r.path,
						Detail: fmt.Sprintf("hard link to inode %v, which no primary dentry holds", ino),
						Advice: "the MDS answers ENOENT or EIO through it: unlink it"})
				}
			}
		}
	}
	inos := make([]mdtypes.Ino, 0, len(s.inos))
	for ino := range s.inos {
		inos = append(inos, ino)
	}
	sort.Slice(inos, func(i, j int) bool { return inos[i] < inos[j] })
	for _, ino := range inos {
		pr := s.inos[ino]
		in := pr.in
		if in.IsDir() {
			continue
		}
		if whole {
			want := len(s.remotes[ino])
			if !pr.stray {
				want++
			}
			if int(in.Nlink) != want && !(pr.stray && in.Nlink == 0 && want == 0) {
				s.add(Problem{Kind: LinkCount, Object: pr.object, Ino: ino, Path: pr.path,
					Detail: fmt.Sprintf("link count %d, but %d dentries name it", in.Nlink, want),
					Advice: "stat shows a wrong count and the file may be purged too early or never: relink and unlink it with the MDS up"})
			}
		}
		pool := s.cfg.Meta.PoolID()
		if in.IsRegular() && in.Layout != nil {
			pool = in.Layout.Pool
		}
		io, err := s.pool(pool)
		if err != nil {
			return err
		}
		first := mdtypes.FirstDataObject(ino)
		raw, err := io.GetXattr(ctx, first, mdtypes.BacktraceXattr)
		switch {
		case errors.Is(err, rados.ErrNotFound) || errors.Is(err, rados.ErrNoAttr):
			raw = nil
		case err != nil:
			return fmt.Errorf("scrub: backtrace of %v on %q (pool %d): %w", ino, first, pool, err)
		}
		s.checkBacktrace(in, raw, first, pool)
		if in.IsRegular() && in.Layout != nil && in.Layout.Validate() == nil {
			s.checkDataEnd(ctx, io, in, pr)
		}
	}
	return nil
}

// checkDataEnd reports a data object just past the file's end.
func (s *scrubber) checkDataEnd(ctx context.Context, io *rados.IOContext, in *mdtypes.Inode, pr *primary) {
	n := max(in.Layout.ObjectCount(in.Size), 1)
	obj := layout.ObjectName(uint64(in.Ino), n)
	if _, err := io.Stat(ctx, obj); err == nil {
		s.add(Problem{Kind: DataPastEOF, Object: obj, Pool: io.PoolID(), Ino: in.Ino, Path: pr.path,
			Detail: fmt.Sprintf("a data object past the file's size %d exists", in.Size),
			Advice: "a truncation was not finished: truncating the file to its size with the MDS up removes it (reads are not affected)"})
	}
}

// pool opens data pool id.
func (s *scrubber) pool(id int64) (*rados.IOContext, error) {
	if io := s.data[id]; io != nil {
		return io, nil
	}
	name, err := s.cfg.Conn.PoolName(id)
	if err != nil {
		return nil, fmt.Errorf("scrub: data pool %d: %w", id, err)
	}
	io, err := s.cfg.Conn.OpenIOContext(name)
	if err != nil {
		return nil, fmt.Errorf("scrub: data pool %d: %w", id, err)
	}
	s.data[id] = io
	return io, nil
}

// checkOrphans reports fragment objects (named "<ino>.<frag>" and
// stamped by an MDS) that the walk did not reach.
func (s *scrubber) checkOrphans(ctx context.Context) {
	names := make([]string, 0, len(s.objects))
	for name := range s.objects {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ino, ok := dirfragIno(name)
		if !ok || s.reached[name] || (ino >= mdtypes.JournalIno(0) && ino < mdtypes.JournalIno(mdtypes.MaxRank)) {
			continue
		}
		if pr := s.inos[ino]; pr != nil && !pr.in.IsDir() {
			continue // a symlink's or device's backtrace object
		}
		if _, err := s.cfg.Meta.GetXattr(ctx, name, mdstore.GuardXattr); err != nil {
			continue // not written by an MDS as a fragment (a backtrace object)
		}
		s.add(Problem{Kind: OrphanDirfrag, Object: name, Pool: s.cfg.Meta.PoolID(), Ino: ino,
			Detail: fmt.Sprintf("fragment object of directory %v, which no dentry reaches", ino),
			Advice: "space only: fs scrub --repair removes it (or rados rm)", Repairable: true,
			repair: func(ctx context.Context) error { return s.cfg.Meta.Delete(ctx, name) }})
	}
}

// dirfragIno parses "<ino hex>.<frag hex, 8 digits>".
func dirfragIno(name string) (mdtypes.Ino, bool) {
	a, b, ok := strings.Cut(name, ".")
	if !ok || len(b) != 8 || a == "" {
		return 0, false
	}
	ino, err := strconv.ParseUint(a, 16, 64)
	if err != nil {
		return 0, false
	}
	if _, err := strconv.ParseUint(b, 16, 32); err != nil {
		return 0, false
	}
	return mdtypes.Ino(ino), true
}

// fixDirLinks returns the repair that sets directory ino's link count to
// n where its inode is stored: its base inode object, or its primary
// dentry (checked to still hold the inode).
func (s *scrubber) fixDirLinks(ino mdtypes.Ino, n uint32) func(context.Context) error {
	pr := s.inos[ino]
	return func(ctx context.Context) error {
		if pr == nil {
			obj := mdtypes.BaseInodeObject(ino)
			b, err := s.cfg.Meta.Read(ctx, obj, 0, 1<<24)
			if err != nil {
				return err
			}
			in, err := mdtypes.UnmarshalInode(b)
			if err != nil || in.Ino != ino {
				return fmt.Errorf("%s changed since the scrub (EAGAIN)", obj)
			}
			in.Nlink = n
			return s.cfg.Meta.WriteFull(ctx, obj, mdtypes.MarshalInode(in))
		}
		key := mdtypes.DentryKey(pr.name)
		m, err := s.cfg.Meta.GetOmapValuesByKeys(ctx, pr.object, key)
		if err != nil {
			return err
		}
		d, err := mdtypes.UnmarshalDentry(pr.name, m[key])
		if err != nil || d.Inode == nil || d.Inode.Ino != ino {
			return fmt.Errorf("%s: dentry %q changed since the scrub (EAGAIN)", pr.object, pr.name)
		}
		d.Inode.Nlink = n
		return s.cfg.Meta.SetOmap(ctx, pr.object, map[string][]byte{key: d.MarshalValue()})
	}
}

// ErrNotRepairable: Repair refuses while a journal holds unflushed
// events (the objects are not the file system's state yet).
var ErrNotRepairable = errors.New("scrub: a rank's journal is not flushed: start its MDS, then take the file system down (cuttle fs fail) and scrub again (EBUSY)")

// Repair fixes what is safe to fix offline among rep's problems: it
// removes orphan fragment objects and sets directories' link counts.
// It must run with no MDS holding a rank (the objects are then the
// whole state). It returns the problems fixed; the first failure stops
// it.
func Repair(ctx context.Context, rep *Report) ([]Problem, error) {
	for _, p := range rep.Problems {
		if p.Kind == JournalNotFlushed {
			return nil, ErrNotRepairable
		}
	}
	var fixed []Problem
	for _, p := range rep.Problems {
		if p.repair == nil {
			continue
		}
		if err := p.repair(ctx); err != nil {
			return fixed, fmt.Errorf("scrub: repair %s: %w", p.Object, err)
		}
		fixed = append(fixed, p)
	}
	return fixed, nil
}
