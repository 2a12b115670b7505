package s3gw

// Flexible checksums (the S3 user guide's "Checking object integrity"):
// x-amz-checksum-crc32, -crc32c, -crc64nvme, -sha1 and -sha256 on
// PutObject and UploadPart, given as a header or as the trailer of an
// aws-chunked body, checked against the body before anything is kept,
// stored with the object or part and returned on GET and HEAD with
// x-amz-checksum-mode: ENABLED; a multipart upload's object checksum is
// either COMPOSITE (the checksum of the parts' binary checksums, "-N")
// or FULL_OBJECT (the CRC of the whole object, combined from the parts'
// CRCs without reading the data again).

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/internal/s3gw/sigv4"
	"github.com/cuttlestore/cuttle/kv"
)

// Checksum types.
const (
	checksumComposite  = "COMPOSITE"
	checksumFullObject = "FULL_OBJECT"
)

// crc64NVMEPoly is the CRC-64/NVME polynomial (NVM Express base
// specification, "CRC-64 protection information"; 0xad93d23594c93659
// normal form) bit-reversed, as hash/crc64 takes it: CRC-64/NVME is
// reflected with an all-ones initial value and final XOR, the same
// convention as hash/crc64's ISO and ECMA tables.
const crc64NVMEPoly = 0x9a6c9329ac4bc9b5

// checksumAlgorithms lists the algorithms S3 defines, in the order its
// headers are looked for.
func checksumAlgorithms() []string {
	return []string{"CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"}
}

// checksumSize is an algorithm's digest length, 0 for an unknown one.
func checksumSize(alg string) int {
	switch alg {
	case "CRC32", "CRC32C":
		return 4
	case "CRC64NVME":
		return 8
	case "SHA1":
		return sha1.Size
	case "SHA256":
		return sha256.Size
	}
	return 0
}

// newChecksumHash returns a hash of a known algorithm.
func newChecksumHash(alg string) hash.Hash {
	switch alg {
	case "CRC32":
		return crc32.NewIEEE()
	case "CRC32C":
		return crc32.New(crc32.MakeTable(crc32.Castagnoli))
	case "CRC64NVME":
		return crc64.New(crc64.MakeTable(crc64NVMEPoly))
	case "SHA1":
		return sha1.New()
	case "SHA256":
		return sha256.New()
	}
	panic("s3gw: unknown checksum algorithm " + alg)
}

// checksumHeader is the header (lowercase) carrying alg's value.
func checksumHeader(alg string) string { return "x-amz-checksum-" + strings.ToLower(alg) }

// isCRC says whether alg is a CRC (which has a FULL_OBJECT multipart
// form).
func isCRC(alg string) bool { return alg == "CRC32" || alg == "CRC32C" || alg == "CRC64NVME" }

// parseAlgorithm reads an algorithm name as clients send it (any case);
// what names none is InvalidRequest naming header.
func parseAlgorithm(v, header string) (string, error) {
	alg := strings.ToUpper(strings.TrimSpace(v))
	if checksumSize(alg) == 0 {
		return "", errInvalidRequest.withMessage("Value for %s header is invalid.", header)
	}
	return alg, nil
}

// bodyChecksum is what a request says of its body's checksum: the
// algorithm (or ""), the expected value (nil when the gateway only
// computes it, or when it comes in the trailer) and the hash being fed
// with the body.
type bodyChecksum struct {
	alg     string
	want    []byte
	trailer bool
	h       hash.Hash
}

// decodeChecksumValue decodes a base64 value of alg; a value of the
// wrong form is InvalidRequest naming where it came from.
func decodeChecksumValue(alg, v, where string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil || len(raw) != checksumSize(alg) {
		return nil, errInvalidRequest.withMessage("Value for %s %s is invalid.", checksumHeader(alg), where)
	}
	return raw, nil
}

// requestChecksum reads a PutObject's or UploadPart's checksum headers:
// at most one x-amz-checksum-* header or an x-amz-trailer naming one,
// and x-amz-sdk-checksum-algorithm, which must agree with it (alone, it
// asks the gateway to compute and store that algorithm's checksum).
func requestChecksum(h http.Header) (*bodyChecksum, error) {
	var c bodyChecksum
	given := 0
	for _, alg := range checksumAlgorithms() {
		if v, ok := h[http.CanonicalHeaderKey(checksumHeader(alg))]; ok {
			given++
			raw, err := decodeChecksumValue(alg, strings.Join(v, ""), "header")
			if err != nil {
				return nil, err
			}
			c.alg, c.want = alg, raw
		}
	}
	if t := h.Get("X-Amz-Trailer"); t != "" {
		name := strings.ToLower(strings.TrimSpace(t))
		alg, ok := strings.CutPrefix(name, "x-amz-checksum-")
		if !ok || checksumSize(strings.ToUpper(alg)) == 0 {
			return nil, errInvalidRequest.withMessage("The x-amz-trailer %q names no checksum this gateway knows: x-amz-checksum-crc32, -crc32c, -crc64nvme, -sha1 or -sha256.", t)
		}
		given++
		c.alg, c.trailer = strings.ToUpper(alg), true
	}
	if given > 1 {
		return nil, errInvalidRequest.withMessage("Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
	}
	if v := h.Get("X-Amz-Sdk-Checksum-Algorithm"); v != "" {
		alg, err := parseAlgorithm(v, "x-amz-sdk-checksum-algorithm")
		if err != nil {
			return nil, err
		}
		if c.alg != "" && c.alg != alg {
			return nil, errInvalidRequest.withMessage("Value for x-amz-sdk-checksum-algorithm header is invalid: %s, but the checksum given is %s.", alg, c.alg)
		}
		c.alg = alg
	}
	if c.alg == "" {
		return &c, nil
	}
	c.h = newChecksumHash(c.alg)
	return &c, nil
}

// ensure makes c compute alg when it computes nothing yet (an upload
// created with an algorithm, a part sent without one); a different
// algorithm is InvalidRequest, as S3 answers.
func (c *bodyChecksum) ensure(alg string) error {
	switch {
	case alg == "":
		return nil
	case c.alg == "":
		c.alg, c.h = alg, newChecksumHash(alg)
		return nil
	case c.alg != alg:
		return errInvalidRequest.withMessage("Checksum Type mismatch occurred, expected checksum Type: %s, actual checksum Type: %s", strings.ToLower(alg), strings.ToLower(c.alg))
	}
	return nil
}

// tee returns body, hashed on its way through when c computes.
func (c *bodyChecksum) tee(body io.Reader) io.Reader {
	if c.h == nil {
		return body
	}
	return io.TeeReader(body, c.h)
}

// verify checks the body read to its end against the value given (in a
// header, or in the aws-chunked body's trailer) and returns the
// checksum to keep: BadDigest when they differ, nothing kept.
func (c *bodyChecksum) verify(rq *request) (meta.Checksum, error) {
	if c.alg == "" {
		return meta.Checksum{}, nil
	}
	want := c.want
	if c.trailer {
		cr, ok := rq.sig.Body.(*sigv4.ChunkReader)
		if !ok {
			return meta.Checksum{}, errInvalidRequest.withMessage("x-amz-trailer needs an aws-chunked body (x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER or STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER).")
		}
		v, ok := cr.Trailers[checksumHeader(c.alg)]
		if !ok {
			return meta.Checksum{}, errInvalidRequest.withMessage("The body's trailer does not carry the %s that x-amz-trailer announced.", checksumHeader(c.alg))
		}
		raw, err := decodeChecksumValue(c.alg, v, "trailer")
		if err != nil {
			return meta.Checksum{}, err
		}
		want = raw
	}
	got := c.h.Sum(nil)
	if want != nil && string(got) != string(want) {
		return meta.Checksum{}, errBadDigest.withMessage("The %s you specified did not match the calculated checksum.", c.alg)
	}
	return meta.Checksum{Algorithm: c.alg, Type: checksumFullObject, Value: base64.StdEncoding.EncodeToString(got)}, nil
}

// uploadChecksum reads CreateMultipartUpload's x-amz-checksum-algorithm
// and x-amz-checksum-type: COMPOSITE (the default but for CRC64NVME) for
// any algorithm but CRC64NVME, FULL_OBJECT (CRC64NVME's default) for the
// CRCs only; a type without an algorithm is InvalidRequest.
func uploadChecksum(h http.Header) (meta.Checksum, error) {
	v, typ := h.Get("X-Amz-Checksum-Algorithm"), strings.ToUpper(strings.TrimSpace(h.Get("X-Amz-Checksum-Type")))
	if v == "" {
		if typ != "" {
			return meta.Checksum{}, errInvalidRequest.withMessage("The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.")
		}
		return meta.Checksum{}, nil
	}
	alg, err := parseAlgorithm(v, "x-amz-checksum-algorithm")
	if err != nil {
		return meta.Checksum{}, err
	}
	switch typ {
	case "":
		typ = checksumComposite
		if alg == "CRC64NVME" {
			typ = checksumFullObject
		}
	case checksumComposite:
		if alg == "CRC64NVME" {
			return meta.Checksum{}, errInvalidRequest.withMessage("The COMPOSITE checksum type cannot be used with the crc64nvme checksum algorithm.")
		}
	case checksumFullObject:
		if !isCRC(alg) {
			return meta.Checksum{}, errInvalidRequest.withMessage("The FULL_OBJECT checksum type cannot be used with the %s checksum algorithm.", strings.ToLower(alg))
		}
	default:
		return meta.Checksum{}, errInvalidRequest.withMessage("Value for x-amz-checksum-type header is invalid: COMPOSITE or FULL_OBJECT.")
	}
	return meta.Checksum{Algorithm: alg, Type: typ}, nil
}

// partChecksum is one part's checksum as CompleteMultipartUpload's
// body names it, for checking against the part's.
type partChecksum struct {
	CRC32     string `xml:"ChecksumCRC32"`
	CRC32C    string `xml:"ChecksumCRC32C"`
	CRC64NVME string `xml:"ChecksumCRC64NVME"`
	SHA1      string `xml:"ChecksumSHA1"`
	SHA256    string `xml:"ChecksumSHA256"`
}

// get returns the value given for alg.
func (p partChecksum) get(alg string) string {
	switch alg {
	case "CRC32":
		return p.CRC32
	case "CRC32C":
		return p.CRC32C
	case "CRC64NVME":
		return p.CRC64NVME
	case "SHA1":
		return p.SHA1
	case "SHA256":
		return p.SHA256
	}
	return ""
}

// checksumFields is a checksum as S3's XML answers carry it: one
// element per algorithm, and the type.
type checksumFields struct {
	CRC32     string `xml:"ChecksumCRC32,omitempty"`
	CRC32C    string `xml:"ChecksumCRC32C,omitempty"`
	CRC64NVME string `xml:"ChecksumCRC64NVME,omitempty"`
	SHA1      string `xml:"ChecksumSHA1,omitempty"`
	SHA256    string `xml:"ChecksumSHA256,omitempty"`
	Type      string `xml:"ChecksumType,omitempty"`
}

// xmlChecksum fills the element of c's algorithm with value (c.Value
// when value is ""); withType adds ChecksumType.
func xmlChecksum(c meta.Checksum, withType bool) checksumFields {
	var f checksumFields
	switch c.Algorithm {
	case "CRC32":
		f.CRC32 = c.Value
	case "CRC32C":
		f.CRC32C = c.Value
	case "CRC64NVME":
		f.CRC64NVME = c.Value
	case "SHA1":
		f.SHA1 = c.Value
	case "SHA256":
		f.SHA256 = c.Value
	}
	if withType && !c.IsZero() {
		f.Type = c.Type
		if f.Type == "" {
			f.Type = checksumFullObject
		}
	}
	return f
}

// setChecksumHeader sets c's x-amz-checksum-* header (and its type, a
// part's has none) on an answer.
func setChecksumHeader(w http.ResponseWriter, c meta.Checksum) {
	if c.IsZero() || c.Value == "" {
		return
	}
	w.Header().Set(checksumHeader(c.Algorithm), c.Value)
	if c.Type != "" {
		w.Header().Set("x-amz-checksum-type", c.Type)
	}
}

// setObjectChecksum answers GetObject's and HeadObject's
// x-amz-checksum-mode: ENABLED with the object's checksum: for the whole
// object only, as S3 does (a range gets none).
func setObjectChecksum(w http.ResponseWriter, r *http.Request, en meta.Entry, ranged bool) {
	if ranged || !strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED") {
		return
	}
	setChecksumHeader(w, en.Checksum)
}

// multipartChecksum computes a completed upload's checksum from its
// parts' (in the order completed), of the upload's algorithm and type:
// COMPOSITE hashes the parts' binary checksums and appends "-N";
// FULL_OBJECT combines the parts' CRCs into the whole object's. A part
// without a checksum of that algorithm is InvalidPart.
func multipartChecksum(up meta.Checksum, parts []meta.Part) (meta.Checksum, error) {
	out := meta.Checksum{Algorithm: up.Algorithm, Type: up.Type}
	var h hash.Hash
	var full uint64
	shifts := map[int64]uint64{} // x^(8·size) by part size: parts are mostly of one size
	if up.Type == checksumComposite {
		h = newChecksumHash(up.Algorithm)
	}
	for i, p := range parts {
		if p.Checksum.Algorithm != up.Algorithm {
			return meta.Checksum{}, errInvalidPart.withMessage("Part %d has no %s checksum.", p.Number, up.Algorithm)
		}
		raw, err := base64.StdEncoding.DecodeString(p.Checksum.Value)
		if err != nil || len(raw) != checksumSize(up.Algorithm) {
			return meta.Checksum{}, fmt.Errorf("part %d: stored checksum %q is corrupt", p.Number, p.Checksum.Value)
		}
		if h != nil {
			h.Write(raw)
			continue
		}
		v := beUint(raw)
		if i == 0 {
			full = v
			continue
		}
		shift, ok := shifts[p.Size]
		if !ok {
			shift = crcShift(up.Algorithm, p.Size)
			shifts[p.Size] = shift
		}
		full = crcCombineShift(up.Algorithm, full, v, shift)
	}
	if h != nil {
		out.Value = base64.StdEncoding.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(parts))
		return out, nil
	}
	out.Value = base64.StdEncoding.EncodeToString(beBytes(full, checksumSize(up.Algorithm)))
	return out, nil
}

// copyChecksum is the checksum a CopyObject keeps: with
// x-amz-checksum-algorithm, one computed over the data as they are
// copied (c computes); else the source's when it is of the whole object
// (a composite one describes the source's parts, which a copy does not
// keep).
func copyChecksum(h http.Header, src meta.Checksum) (*bodyChecksum, meta.Checksum, error) {
	c := &bodyChecksum{}
	if v := h.Get("X-Amz-Checksum-Algorithm"); v != "" {
		alg, err := parseAlgorithm(v, "x-amz-checksum-algorithm")
		if err != nil {
			return nil, meta.Checksum{}, err
		}
		c.alg, c.h = alg, newChecksumHash(alg)
		return c, meta.Checksum{}, nil
	}
	if src.Type == checksumComposite {
		return c, meta.Checksum{}, nil
	}
	return c, src, nil
}

// computed returns what c computed (the zero Checksum when nothing).
func (c *bodyChecksum) computed() meta.Checksum {
	if c.h == nil {
		return meta.Checksum{}
	}
	return meta.Checksum{Algorithm: c.alg, Type: checksumFullObject, Value: base64.StdEncoding.EncodeToString(c.h.Sum(nil))}
}

// checkCompletedPart checks the checksum CompleteMultipartUpload gives
// for part p: an upload with a COMPOSITE checksum needs each part's
// (InvalidRequest without), and a value given must be the part's
// (InvalidPart).
func checkCompletedPart(up meta.Checksum, p meta.Part, given partChecksum) error {
	alg := up.Algorithm
	if alg == "" {
		alg = p.Checksum.Algorithm
	}
	v := given.get(alg)
	if v == "" {
		if up.Type == checksumComposite {
			return errInvalidRequest.withMessage("The upload was created using a %s checksum. The complete request must include the checksum for each part. It was missing for part %d in the request.", strings.ToLower(up.Algorithm), p.Number)
		}
		return nil
	}
	if v != p.Checksum.Value {
		return errInvalidPart.withMessage("The %s checksum given for part %d does not match the part's.", alg, p.Number)
	}
	return nil
}

// completedChecksum gives en, the object of an upload created with
// checksum algorithm up, its checksum computed from the parts and the
// list of parts' checksums (when the entry has room for them), checked
// against the x-amz-checksum-* header and x-amz-checksum-type that
// CompleteMultipartUpload may carry (BadDigest, InvalidRequest).
func completedChecksum(h http.Header, up meta.Checksum, parts []meta.Part, en *meta.Entry) error {
	if up.IsZero() {
		return nil
	}
	if t := h.Get("X-Amz-Checksum-Type"); t != "" && !strings.EqualFold(t, up.Type) {
		return errInvalidRequest.withMessage("The upload was created with the %s checksum type; this request names %s.", up.Type, t)
	}
	c, err := multipartChecksum(up, parts)
	if err != nil {
		return err
	}
	if v := h.Get(checksumHeader(up.Algorithm)); v != "" {
		whole, _, _ := strings.Cut(c.Value, "-")
		if v != c.Value && v != whole {
			return errBadDigest.withMessage("The %s you specified did not match the calculated checksum.", up.Algorithm)
		}
	}
	en.Checksum = c
	en.Parts = make([]meta.PartSum, len(parts))
	for i, p := range parts {
		en.Parts[i] = meta.PartSum{Number: p.Number, Size: p.Size, Checksum: p.Checksum.Value}
	}
	if len(en.Encode()) > kv.MaxValueLen-maxKeyLen-1024 {
		en.Parts = nil // GetObjectAttributes will give the count only
	}
	return nil
}
