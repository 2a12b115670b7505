package s3gw

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// Lifecycle configuration, as S3 defines it (the S3 API reference:
// PutBucketLifecycleConfiguration, GetBucketLifecycleConfiguration,
// DeleteBucketLifecycle, LifecycleRule, LifecycleRuleFilter; the user
// guide's "Managing your storage lifecycle"). A bucket's configuration
// is 1 to 1,000 rules, each with an ID (unique, at most 255
// characters; one is made when none is given), a Status (Enabled or
// Disabled), a Filter (Prefix, Tag, ObjectSizeGreaterThan,
// ObjectSizeLessThan, or an And of them) or the legacy Prefix beside
// Status, and at least one action: Expiration (Days, Date or
// ExpiredObjectDeleteMarker), NoncurrentVersionExpiration
// (NoncurrentDays, NewerNoncurrentVersions),
// AbortIncompleteMultipartUpload (DaysAfterInitiation), Transition and
// NoncurrentVersionTransition. Transitions are accepted, kept and
// answered but do nothing: the gateway has one storage class, so there
// is nowhere to move data to (docs/S3.md, "Lifecycle"). The
// configuration is the bucket owner's, or whoever the policy allows
// s3:GetLifecycleConfiguration / s3:PutLifecycleConfiguration (which also
// deletes it, as in S3). What the rules do is lcworker.go's.

var errNoSuchLifecycle = &apiError{"NoSuchLifecycleConfiguration", 404, "The lifecycle configuration does not exist"}

// lifecycleConfiguration is PutBucketLifecycleConfiguration's body and
// GetBucketLifecycleConfiguration's answer.
type lifecycleConfiguration struct {
	XMLName xml.Name           `xml:"LifecycleConfiguration"`
	Xmlns   string             `xml:"xmlns,attr,omitempty"`
	Rules   []lifecycleRuleXML `xml:"Rule"`
}

type lifecycleRuleXML struct {
	ID                             *string                 `xml:"ID"`
	Filter                         *lifecycleFilterXML     `xml:"Filter"`
	Prefix                         *string                 `xml:"Prefix"`
	Status                         string                  `xml:"Status"`
	Expiration                     *lifecycleExpirationXML `xml:"Expiration"`
	Transitions                    []lifecycleTransXML     `xml:"Transition"`
	NoncurrentVersionTransitions   []lifecycleTransXML     `xml:"NoncurrentVersionTransition"`
	NoncurrentVersionExpiration    *noncurrentExpXML       `xml:"NoncurrentVersionExpiration"`
	AbortIncompleteMultipartUpload *abortIncompleteXML     `xml:"AbortIncompleteMultipartUpload"`
}

type lifecycleFilterXML struct {
	Prefix                *string          `xml:"Prefix"`
	Tag                   *tagXML          `xml:"Tag"`
	ObjectSizeGreaterThan *string          `xml:"ObjectSizeGreaterThan"`
	ObjectSizeLessThan    *string          `xml:"ObjectSizeLessThan"`
	And                   *lifecycleAndXML `xml:"And"`
}

type lifecycleAndXML struct {
	Prefix                *string  `xml:"Prefix"`
	Tags                  []tagXML `xml:"Tag"`
	ObjectSizeGreaterThan *string  `xml:"ObjectSizeGreaterThan"`
	ObjectSizeLessThan    *string  `xml:"ObjectSizeLessThan"`
}

type lifecycleExpirationXML struct {
	Days                      *string `xml:"Days"`
	Date                      *string `xml:"Date"`
	ExpiredObjectDeleteMarker *string `xml:"ExpiredObjectDeleteMarker"`
}

type lifecycleTransXML struct {
	Days                    *string `xml:"Days"`
	NoncurrentDays          *string `xml:"NoncurrentDays"`
	Date                    *string `xml:"Date"`
	StorageClass            string  `xml:"StorageClass"`
	NewerNoncurrentVersions *string `xml:"NewerNoncurrentVersions"`
}

type noncurrentExpXML struct {
	NoncurrentDays          *string `xml:"NoncurrentDays"`
	NewerNoncurrentVersions *string `xml:"NewerNoncurrentVersions"`
}

type abortIncompleteXML struct {
	DaysAfterInitiation *string `xml:"DaysAfterInitiation"`
}

// transitionClasses are the storage classes a Transition may name.
var transitionClasses = []string{"STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING", "GLACIER", "GLACIER_IR", "DEEP_ARCHIVE"}

// Lifecycle limits: S3's.
const (
	maxLifecycleID     = 255 // characters
	maxNewerNoncurrent = 100
)

// lcInt parses a count element: not a number is MalformedXML (the
// schema's integer), a number below min InvalidArgument.
func lcInt(v *string, what string, min int64) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(*v), 10, 64)
	if err != nil {
		return 0, errMalformedXML.withMessage("%s %q is not an integer.", what, *v)
	}
	if n < min {
		if min == 1 {
			return 0, errInvalidArgument.withMessage("'%s' must be a positive integer.", what)
		}
		return 0, errInvalidArgument.withMessage("'%s' must be at least %d.", what, min)
	}
	return n, nil
}

// lcDate parses a Date element: an ISO 8601 time (MalformedXML when it
// does not parse) at midnight UTC (InvalidArgument otherwise).
func lcDate(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	var t time.Time
	var err error
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err = time.Parse(layout, v); err == nil {
			break
		}
	}
	if err != nil {
		return time.Time{}, errMalformedXML.withMessage("Date %q is not an ISO 8601 time.", v)
	}
	t = t.UTC()
	if !t.Equal(t.Truncate(24 * time.Hour)) {
		return time.Time{}, errInvalidArgument.withMessage("'Date' must be at midnight GMT.")
	}
	return t, nil
}

// parseLifecycle reads and validates a LifecycleConfiguration.
func parseLifecycle(r *http.Request) ([]meta.LifecycleRule, error) {
	var doc lifecycleConfiguration
	if err := decodeXML(r.Body, &doc); err != nil {
		return nil, err
	}
	return checkLifecycle(doc)
}

// checkLifecycle validates a parsed configuration and returns its rules.
func checkLifecycle(doc lifecycleConfiguration) ([]meta.LifecycleRule, error) {
	if len(doc.Rules) == 0 {
		return nil, errMalformedXML.withMessage("A LifecycleConfiguration needs at least one Rule.")
	}
	if len(doc.Rules) > meta.MaxLifecycleRules {
		return nil, errMalformedXML.withMessage("A LifecycleConfiguration holds at most %d rules; this one has %d.", meta.MaxLifecycleRules, len(doc.Rules))
	}
	ids := map[string]bool{}
	rules := make([]meta.LifecycleRule, 0, len(doc.Rules))
	for _, x := range doc.Rules {
		rule, err := checkLifecycleRule(x)
		if err != nil {
			return nil, err
		}
		if ids[rule.ID] {
			return nil, errInvalidArgument.withMessage("Rule ID must be unique. Found same ID for more than one rule: %q.", rule.ID)
		}
		ids[rule.ID] = true
		rules = append(rules, rule)
	}
	return rules, nil
}

func checkLifecycleRule(x lifecycleRuleXML) (meta.LifecycleRule, error) {
	var rule meta.LifecycleRule
	if x.ID != nil && *x.ID != "" {
		if !utf8.ValidString(*x.ID) || utf8.RuneCountInString(*x.ID) > maxLifecycleID {
			return rule, errInvalidArgument.withMessage("ID length should not exceed allowed limit of %d.", maxLifecycleID)
		}
		rule.ID = *x.ID
	} else {
		var b [16]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
		rule.ID = hex.EncodeToString(b[:])
	}
	switch x.Status {
	case "Enabled":
		rule.Enabled = true
	case "Disabled":
	default:
		return rule, errMalformedXML.withMessage("Rule %q: Status %q is neither Enabled nor Disabled.", rule.ID, x.Status)
	}
	rule.Filter = meta.LifecycleFilter{SizeGreaterThan: -1, SizeLessThan: -1}
	switch {
	case x.Filter != nil && x.Prefix != nil:
		return rule, errMalformedXML.withMessage("Rule %q has both a Filter and a Prefix.", rule.ID)
	case x.Filter == nil && x.Prefix == nil:
		return rule, errMalformedXML.withMessage("Rule %q needs a Filter or a Prefix.", rule.ID)
	case x.Prefix != nil:
		rule.LegacyPrefix, rule.Filter.Prefix = true, *x.Prefix
	default:
		f, err := checkLifecycleFilter(rule.ID, *x.Filter)
		if err != nil {
			return rule, err
		}
		rule.Filter = f
	}
	if len(rule.Filter.Prefix) > maxKeyLen {
		return rule, errInvalidArgument.withMessage("Rule %q: a prefix is at most %d bytes.", rule.ID, maxKeyLen)
	}
	filtersObjects := len(rule.Filter.Tags) > 0 || rule.Filter.SizeGreaterThan >= 0 || rule.Filter.SizeLessThan >= 0
	actions := 0
	usesDays, usesDate := false, false
	if e := x.Expiration; e != nil {
		actions++
		set := 0
		for _, v := range []*string{e.Days, e.Date, e.ExpiredObjectDeleteMarker} {
			if v != nil {
				set++
			}
		}
		if set != 1 {
			return rule, errMalformedXML.withMessage("Rule %q: an Expiration has exactly one of Days, Date and ExpiredObjectDeleteMarker.", rule.ID)
		}
		switch {
		case e.Days != nil:
			n, err := lcInt(e.Days, "Days' for Expiration action", 1)
			if err != nil {
				return rule, err
			}
			rule.ExpirationDays, usesDays = n, true
		case e.Date != nil:
			t, err := lcDate(*e.Date)
			if err != nil {
				return rule, err
			}
			rule.ExpirationDate, usesDate = t, true
		default:
			rule.MarkerGiven = true
			switch strings.TrimSpace(*e.ExpiredObjectDeleteMarker) {
			case "true":
				rule.ExpiredObjectDeleteMarker = true
			case "false":
			default:
				return rule, errMalformedXML.withMessage("Rule %q: ExpiredObjectDeleteMarker is true or false.", rule.ID)
			}
			if filtersObjects {
				return rule, errInvalidRequest.withMessage("Rule %q: ExpiredObjectDeleteMarker cannot be specified with object tags or sizes.", rule.ID)
			}
		}
	}
	if n := x.NoncurrentVersionExpiration; n != nil {
		actions++
		if n.NoncurrentDays == nil {
			return rule, errMalformedXML.withMessage("Rule %q: NoncurrentVersionExpiration needs NoncurrentDays.", rule.ID)
		}
		d, err := lcInt(n.NoncurrentDays, "NoncurrentDays' for NoncurrentVersionExpiration action", 1)
		if err != nil {
			return rule, err
		}
		rule.NoncurrentDays = d
		if n.NewerNoncurrentVersions != nil {
			k, err := lcInt(n.NewerNoncurrentVersions, "NewerNoncurrentVersions", 1)
			if err != nil {
				return rule, err
			}
			if k > maxNewerNoncurrent {
				return rule, errInvalidArgument.withMessage("'NewerNoncurrentVersions' is at most %d.", maxNewerNoncurrent)
			}
			rule.NewerNoncurrentVersions = k
		}
	}
	if a := x.AbortIncompleteMultipartUpload; a != nil {
		actions++
		if a.DaysAfterInitiation == nil {
			return rule, errMalformedXML.withMessage("Rule %q: AbortIncompleteMultipartUpload needs DaysAfterInitiation.", rule.ID)
		}
		d, err := lcInt(a.DaysAfterInitiation, "DaysAfterInitiation' for AbortIncompleteMultipartUpload action", 1)
		if err != nil {
			return rule, err
		}
		if filtersObjects {
			return rule, errInvalidRequest.withMessage("Rule %q: AbortIncompleteMultipartUpload cannot be specified with object tags or sizes.", rule.ID)
		}
		rule.AbortDays = d
	}
	for _, list := range []struct {
		xs         []lifecycleTransXML
		noncurrent bool
	}{{x.Transitions, false}, {x.NoncurrentVersionTransitions, true}} {
		if len(list.xs) > 0 {
			actions++
		}
		if len(list.xs) > 8 {
			return rule, errMalformedXML.withMessage("Rule %q: at most 8 transitions of each kind.", rule.ID)
		}
		seen := map[string]bool{}
		for _, t := range list.xs {
			tr, err := checkTransition(rule.ID, t, list.noncurrent)
			if err != nil {
				return rule, err
			}
			if seen[tr.StorageClass] {
				return rule, errInvalidArgument.withMessage("Rule %q: two transitions to %s.", rule.ID, tr.StorageClass)
			}
			seen[tr.StorageClass] = true
			if !list.noncurrent {
				usesDays = usesDays || t.Days != nil
				usesDate = usesDate || t.Date != nil
				rule.Transitions = append(rule.Transitions, tr)
			} else {
				rule.NoncurrentTransitions = append(rule.NoncurrentTransitions, tr)
			}
		}
	}
	if usesDays && usesDate {
		return rule, errInvalidRequest.withMessage("Found mixed 'Date' and 'Days' based Expiration and Transition actions in lifecycle rule %q.", rule.ID)
	}
	if actions == 0 {
		return rule, errInvalidRequest.withMessage("At least one action needs to be specified in a rule (%q).", rule.ID)
	}
	return rule, nil
}

func checkTransition(id string, t lifecycleTransXML, noncurrent bool) (meta.LifecycleTransition, error) {
	var tr meta.LifecycleTransition
	if !slices.Contains(transitionClasses, t.StorageClass) {
		return tr, errInvalidStorageClass.withMessage("Rule %q: a transition's StorageClass is one of %s; not %q.", id, strings.Join(transitionClasses, ", "), t.StorageClass)
	}
	tr.StorageClass = t.StorageClass
	if noncurrent {
		if t.NoncurrentDays == nil || t.Days != nil || t.Date != nil {
			return tr, errMalformedXML.withMessage("Rule %q: a NoncurrentVersionTransition has NoncurrentDays only.", id)
		}
		d, err := lcInt(t.NoncurrentDays, "NoncurrentDays' for NoncurrentVersionTransition action", 0)
		if err != nil {
			return tr, err
		}
		tr.Days = d
		if t.NewerNoncurrentVersions != nil {
			k, err := lcInt(t.NewerNoncurrentVersions, "NewerNoncurrentVersions", 1)
			if err != nil {
				return tr, err
			}
			if k > maxNewerNoncurrent {
				return tr, errInvalidArgument.withMessage("'NewerNoncurrentVersions' is at most %d.", maxNewerNoncurrent)
			}
			tr.Newer = k
		}
		return tr, nil
	}
	if t.NoncurrentDays != nil || t.NewerNoncurrentVersions != nil || (t.Days == nil) == (t.Date == nil) {
		return tr, errMalformedXML.withMessage("Rule %q: a Transition has exactly one of Days and Date.", id)
	}
	if t.Days != nil {
		d, err := lcInt(t.Days, "Days' for Transition action", 0)
		if err != nil {
			return tr, err
		}
		tr.Days = d
		return tr, nil
	}
	d, err := lcDate(*t.Date)
	if err != nil {
		return tr, err
	}
	tr.Date = d
	return tr, nil
}

// checkLifecycleFilter validates a rule's Filter: empty (every object),
// or exactly one of Prefix, Tag, ObjectSizeGreaterThan,
// ObjectSizeLessThan and And.
func checkLifecycleFilter(id string, f lifecycleFilterXML) (meta.LifecycleFilter, error) {
	out := meta.LifecycleFilter{SizeGreaterThan: -1, SizeLessThan: -1}
	n := 0
	for _, set := range []bool{f.Prefix != nil, f.Tag != nil, f.ObjectSizeGreaterThan != nil, f.ObjectSizeLessThan != nil, f.And != nil} {
		if set {
			n++
		}
	}
	if n > 1 {
		return out, errMalformedXML.withMessage("Rule %q: a Filter has one of Prefix, Tag, ObjectSizeGreaterThan, ObjectSizeLessThan and And; use And to combine them.", id)
	}
	prefix, gt, lt := f.Prefix, f.ObjectSizeGreaterThan, f.ObjectSizeLessThan
	var tags []tagXML
	if f.Tag != nil {
		tags = []tagXML{*f.Tag}
	}
	if a := f.And; a != nil {
		out.And = true
		prefix, gt, lt, tags = a.Prefix, a.ObjectSizeGreaterThan, a.ObjectSizeLessThan, a.Tags
	}
	if prefix != nil {
		out.Prefix = *prefix
	}
	for _, t := range tags {
		if t.Key == nil || t.Value == nil {
			return out, errMalformedXML.withMessage("Rule %q: a Tag needs a Key and a Value.", id)
		}
		out.Tags = append(out.Tags, meta.Tag{Key: *t.Key, Value: *t.Value})
	}
	if err := checkTags(out.Tags, maxBucketTags); err != nil {
		return out, err
	}
	for _, b := range []struct {
		v    *string
		dst  *int64
		name string
	}{{gt, &out.SizeGreaterThan, "ObjectSizeGreaterThan"}, {lt, &out.SizeLessThan, "ObjectSizeLessThan"}} {
		if b.v == nil {
			continue
		}
		v, err := lcInt(b.v, b.name, 0)
		if err != nil {
			return out, err
		}
		*b.dst = v
	}
	if out.SizeGreaterThan >= 0 && out.SizeLessThan >= 0 && out.SizeGreaterThan >= out.SizeLessThan {
		return out, errInvalidArgument.withMessage("Rule %q: ObjectSizeGreaterThan (%d) must be less than ObjectSizeLessThan (%d).", id, out.SizeGreaterThan, out.SizeLessThan)
	}
	return out, nil
}

// lifecycleDoc is the configuration rules as GetBucketLifecycleConfiguration
// answers them: as they were given.
func lifecycleDoc(rules []meta.LifecycleRule) lifecycleConfiguration {
	doc := lifecycleConfiguration{Xmlns: xmlns}
	str := func(s string) *string { return &s }
	num := func(n int64) *string { return str(strconv.FormatInt(n, 10)) }
	date := func(t time.Time) *string { return str(t.UTC().Format("2006-01-02T15:04:05.000Z")) }
	for _, r := range rules {
		x := lifecycleRuleXML{ID: str(r.ID), Status: "Disabled"}
		if r.Enabled {
			x.Status = "Enabled"
		}
		f := r.Filter
		switch {
		case r.LegacyPrefix:
			x.Prefix = str(f.Prefix)
		case f.And:
			a := &lifecycleAndXML{}
			if f.Prefix != "" {
				a.Prefix = str(f.Prefix)
			}
			for _, t := range f.Tags {
				a.Tags = append(a.Tags, tagXML{Key: str(t.Key), Value: str(t.Value)})
			}
			if f.SizeGreaterThan >= 0 {
				a.ObjectSizeGreaterThan = num(f.SizeGreaterThan)
			}
			if f.SizeLessThan >= 0 {
				a.ObjectSizeLessThan = num(f.SizeLessThan)
			}
			x.Filter = &lifecycleFilterXML{And: a}
		default:
			x.Filter = &lifecycleFilterXML{}
			switch {
			case len(f.Tags) == 1:
				x.Filter.Tag = &tagXML{Key: str(f.Tags[0].Key), Value: str(f.Tags[0].Value)}
			case f.SizeGreaterThan >= 0:
				x.Filter.ObjectSizeGreaterThan = num(f.SizeGreaterThan)
			case f.SizeLessThan >= 0:
				x.Filter.ObjectSizeLessThan = num(f.SizeLessThan)
			case f.Prefix != "":
				x.Filter.Prefix = str(f.Prefix)
			}
		}
		switch {
		case r.ExpirationDays > 0:
			x.Expiration = &lifecycleExpirationXML{Days: num(r.ExpirationDays)}
		case !r.ExpirationDate.IsZero():
			x.Expiration = &lifecycleExpirationXML{Date: date(r.ExpirationDate)}
		case r.MarkerGiven:
			x.Expiration = &lifecycleExpirationXML{ExpiredObjectDeleteMarker: str(strconv.FormatBool(r.ExpiredObjectDeleteMarker))}
		}
		if r.NoncurrentDays > 0 {
			x.NoncurrentVersionExpiration = &noncurrentExpXML{NoncurrentDays: num(r.NoncurrentDays)}
			if r.NewerNoncurrentVersions > 0 {
				x.NoncurrentVersionExpiration.NewerNoncurrentVersions = num(r.NewerNoncurrentVersions)
			}
		}
		if r.AbortDays > 0 {
			x.AbortIncompleteMultipartUpload = &abortIncompleteXML{DaysAfterInitiation: num(r.AbortDays)}
		}
		for _, t := range r.Transitions {
			tx := lifecycleTransXML{StorageClass: t.StorageClass}
			if t.Date.IsZero() {
				tx.Days = num(t.Days)
			} else {
				tx.Date = date(t.Date)
			}
			x.Transitions = append(x.Transitions, tx)
		}
		for _, t := range r.NoncurrentTransitions {
			tx := lifecycleTransXML{StorageClass: t.StorageClass, NoncurrentDays: num(t.Days)}
			if t.Newer > 0 {
				tx.NewerNoncurrentVersions = num(t.Newer)
			}
			x.NoncurrentVersionTransitions = append(x.NoncurrentVersionTransitions, tx)
		}
		doc.Rules = append(doc.Rules, x)
	}
	return doc
}

func (g *Gateway) getBucketLifecycle(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:GetLifecycleConfiguration")
	if err != nil {
		return err
	}
	if len(b.Lifecycle) == 0 {
		return errNoSuchLifecycle
	}
	writeXML(w, http.StatusOK, lifecycleDoc(b.Lifecycle))
	return nil
}

func (g *Gateway) putBucketLifecycle(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:PutLifecycleConfiguration")
	if err != nil {
		return err
	}
	rules, err := parseLifecycle(r)
	if err != nil {
		return err
	}
	if _, err := g.meta.SetBucketLifecycle(r.Context(), b, rules); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *Gateway) deleteBucketLifecycle(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:PutLifecycleConfiguration")
	if err != nil {
		return err
	}
	if len(b.Lifecycle) > 0 {
		if _, err := g.meta.SetBucketLifecycle(r.Context(), b, nil); err != nil {
			return err
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// The decisions: which of a name's versions the rules expire at a
// time, as pure functions of the rules, the versions and the clock.

// lcExpiry is when something dated t expires after days lifecycle days
// of length day: S3 adds the days and rounds up to the next midnight
// UTC; a shortened day (testing) is not rounded.
func lcExpiry(t time.Time, days int64, day time.Duration) time.Time {
	at := t.Add(time.Duration(days) * day)
	if day != 24*time.Hour {
		return at
	}
	mid := at.Truncate(24 * time.Hour)
	if mid.Before(at) {
		mid = mid.Add(24 * time.Hour)
	}
	return mid
}

// lcMatches says whether rule's filter selects an object named key with
// entry en.
func lcMatches(f meta.LifecycleFilter, key string, en meta.Entry) bool {
	if !strings.HasPrefix(key, f.Prefix) {
		return false
	}
	if f.SizeGreaterThan >= 0 && en.Size <= f.SizeGreaterThan {
		return false
	}
	if f.SizeLessThan >= 0 && en.Size >= f.SizeLessThan {
		return false
	}
	for _, t := range f.Tags {
		if !slices.Contains(en.Tags, t) {
			return false
		}
	}
	return true
}

// lcCurrentExpiry is when the rules expire the current version en of
// key, and the rule that does it first (ok false: none does).
func lcCurrentExpiry(rules []meta.LifecycleRule, key string, en meta.Entry, day time.Duration) (at time.Time, ruleID string, ok bool) {
	if en.DeleteMarker {
		return time.Time{}, "", false
	}
	for _, r := range rules {
		if !r.Enabled || !lcMatches(r.Filter, key, en) {
			continue
		}
		var t time.Time
		switch {
		case r.ExpirationDays > 0:
			t = lcExpiry(en.MTime, r.ExpirationDays, day)
		case !r.ExpirationDate.IsZero():
			t = r.ExpirationDate
		default:
			continue
		}
		if !ok || t.Before(at) {
			at, ruleID, ok = t, r.ID, true
		}
	}
	return at, ruleID, ok
}

// lcAction is one thing a pass does to a name.
type lcAction struct {
	kind    lcKind
	version string // the version removed (NullVersion for the null one)
	stamp   int64  // its stamp, checked again before it goes
}

type lcKind uint8

const (
	lcExpireCurrent lcKind = iota + 1 // as DELETE without a version id
	lcRemoveNoncurrent
	lcRemoveMarker // an expired object delete marker
)

func (k lcKind) String() string {
	switch k {
	case lcExpireCurrent:
		return "expire"
	case lcRemoveNoncurrent:
		return "noncurrent"
	case lcRemoveMarker:
		return "delete_marker"
	}
	return "unknown"
}

// lcPlanName decides what the rules do now to name, whose versions vs
// are newest first (vs[0] the current one) in a bucket whose
// versioning state is versioning: the current version expires (one
// action, as DELETE); noncurrent versions (delete markers too) that
// have been noncurrent for NoncurrentDays — from the time the next
// newer version was written — go for good, but for the
// NewerNoncurrentVersions newest; a delete marker left current with no
// other version goes when a rule says ExpiredObjectDeleteMarker. The
// current version is expired by the rules alone, and a marker's removal
// is judged on what the noncurrent removals leave.
func lcPlanName(rules []meta.LifecycleRule, name string, vs []meta.Entry, versioning string, now time.Time, day time.Duration) []lcAction {
	if len(vs) == 0 {
		return nil
	}
	var out []lcAction
	cur := vs[0]
	if at, _, ok := lcCurrentExpiry(rules, name, cur, day); ok && !now.Before(at) {
		if versioning == "" {
			return []lcAction{{kind: lcExpireCurrent, version: meta.NullVersion, stamp: cur.VersionStamp()}}
		}
		out = append(out, lcAction{kind: lcExpireCurrent, stamp: cur.VersionStamp()})
	}
	if versioning == "" {
		return out
	}
	removed := 0
	for i := 1; i < len(vs); i++ {
		v := vs[i]
		since := time.Unix(0, vs[i-1].VersionStamp()).UTC() // noncurrent since its successor came
		for _, r := range rules {
			if !r.Enabled || r.NoncurrentDays == 0 || !lcMatches(r.Filter, name, v) {
				continue
			}
			if int64(i-1) < r.NewerNoncurrentVersions {
				continue // among the newest noncurrent versions kept
			}
			if !now.Before(lcExpiry(since, r.NoncurrentDays, day)) {
				out = append(out, lcAction{kind: lcRemoveNoncurrent, version: v.VersionID, stamp: v.VersionStamp()})
				removed++
				break
			}
		}
	}
	if cur.DeleteMarker && removed == len(vs)-1 {
		for _, r := range rules {
			if r.Enabled && r.ExpiredObjectDeleteMarker && strings.HasPrefix(name, r.Filter.Prefix) {
				out = append(out, lcAction{kind: lcRemoveMarker, version: cur.VersionID, stamp: cur.VersionStamp()})
				break
			}
		}
	}
	return out
}

// lcAbortDue says whether the rules abort upload u now (and which rule).
func lcAbortDue(rules []meta.LifecycleRule, u meta.Upload, now time.Time, day time.Duration) (string, bool) {
	for _, r := range rules {
		if r.Enabled && r.AbortDays > 0 && strings.HasPrefix(u.Key, r.Filter.Prefix) && !now.Before(lcExpiry(u.Initiated, r.AbortDays, day)) {
			return r.ID, true
		}
	}
	return "", false
}

// lcActive says whether any rule of rules is enabled.
func lcActive(rules []meta.LifecycleRule) bool {
	return slices.ContainsFunc(rules, func(r meta.LifecycleRule) bool { return r.Enabled })
}

// setExpirationHeader sends x-amz-expiration for the current version en
// of key in b when a rule will expire it, as S3 does on PUT, GET and
// HEAD: expiry-date="DATE", rule-id="ID".
func (g *Gateway) setExpirationHeader(w http.ResponseWriter, b meta.Bucket, key string, en meta.Entry) {
	if len(b.Lifecycle) == 0 {
		return
	}
	if at, id, ok := lcCurrentExpiry(b.Lifecycle, key, en, g.lcDay()); ok {
		w.Header().Set("x-amz-expiration", fmt.Sprintf(`expiry-date="%s", rule-id="%s"`, at.UTC().Format(http.TimeFormat), strings.ReplaceAll(id, `"`, `\"`)))
	}
}
