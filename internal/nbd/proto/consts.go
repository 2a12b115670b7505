package proto

// Magic numbers (proto.md "Protocol phases").
const (
	// Magic opens the server's greeting: "NBDMAGIC".
	Magic uint64 = 0x4e42444d41474943
	// OptMagic ("IHAVEOPT") follows it in the newstyle greeting and
	// opens every option the client sends.
	OptMagic uint64 = 0x49484156454f5054
	// RepMagic opens every option reply.
	RepMagic uint64 = 0x3e889045565a9
	// RequestMagic opens every transmission request.
	RequestMagic uint32 = 0x25609513
	// SimpleReplyMagic opens a simple reply.
	SimpleReplyMagic uint32 = 0x67446698
	// StructuredReplyMagic opens a structured reply chunk.
	StructuredReplyMagic uint32 = 0x668e33ef
)

// Handshake flags the server sends (proto.md "Handshake flags").
const (
	FlagFixedNewstyle uint16 = 1 << 0
	FlagNoZeroes      uint16 = 1 << 1
)

// Client flags (proto.md "Client flags").
const (
	ClientFixedNewstyle uint32 = 1 << 0
	ClientNoZeroes      uint32 = 1 << 1
)

// Transmission flags of an export (proto.md "Transmission flags").
const (
	TransHasFlags        uint16 = 1 << 0
	TransReadOnly        uint16 = 1 << 1
	TransSendFlush       uint16 = 1 << 2
	TransSendFUA         uint16 = 1 << 3
	TransRotational      uint16 = 1 << 4
	TransSendTrim        uint16 = 1 << 5
	TransSendWriteZeroes uint16 = 1 << 6
	TransSendDF          uint16 = 1 << 7
	TransCanMultiConn    uint16 = 1 << 8
)

// Options (proto.md "Option types").
const (
	OptExportName      uint32 = 1
	OptAbort           uint32 = 2
	OptList            uint32 = 3
	OptStartTLS        uint32 = 5
	OptInfo            uint32 = 6
	OptGo              uint32 = 7
	OptStructuredReply uint32 = 8
	OptListMetaContext uint32 = 9
	OptSetMetaContext  uint32 = 10
)

// Option reply types (proto.md "Option reply types"); errors have bit 31
// set.
const (
	RepAck         uint32 = 1
	RepServer      uint32 = 2
	RepInfo        uint32 = 3
	RepMetaContext uint32 = 4

	RepErrUnsup         uint32 = 1<<31 | 1
	RepErrPolicy        uint32 = 1<<31 | 2
	RepErrInvalid       uint32 = 1<<31 | 3
	RepErrPlatform      uint32 = 1<<31 | 4
	RepErrTLSReqd       uint32 = 1<<31 | 5
	RepErrUnknown       uint32 = 1<<31 | 6
	RepErrShutdown      uint32 = 1<<31 | 7
	RepErrBlockSizeReqd uint32 = 1<<31 | 8
	RepErrTooBig        uint32 = 1<<31 | 9
)

// Information types of NBD_OPT_INFO and NBD_OPT_GO (proto.md "NBD_REP_INFO").
const (
	InfoExport      uint16 = 0
	InfoName        uint16 = 1
	InfoDescription uint16 = 2
	InfoBlockSize   uint16 = 3
)

// Commands (proto.md "Request types").
const (
	CmdRead        uint16 = 0
	CmdWrite       uint16 = 1
	CmdDisc        uint16 = 2
	CmdFlush       uint16 = 3
	CmdTrim        uint16 = 4
	CmdCache       uint16 = 5
	CmdWriteZeroes uint16 = 6
	CmdBlockStatus uint16 = 7
)

// Command flags (proto.md "Command flags").
const (
	CmdFlagFUA    uint16 = 1 << 0
	CmdFlagNoHole uint16 = 1 << 1
	CmdFlagDF     uint16 = 1 << 2
	CmdFlagReqOne uint16 = 1 << 3
)

// Structured reply chunk types and flags (proto.md "Structured reply
// chunk message types").
const (
	ReplyFlagDone uint16 = 1 << 0

	ReplyNone        uint16 = 0
	ReplyOffsetData  uint16 = 1
	ReplyOffsetHole  uint16 = 2
	ReplyBlockStatus uint16 = 5
	ReplyError       uint16 = 1<<15 | 1
	ReplyErrorOffset uint16 = 1<<15 | 2
)

// State flags of the base:allocation meta context.
const (
	StateHole uint32 = 1 << 0
	StateZero uint32 = 1 << 1
)

// BaseAllocation is the one meta context this server knows.
const BaseAllocation = "base:allocation"

// Errno is an error value of a reply (proto.md "Error values"): Linux's
// numbers, whatever the server's platform.
type Errno uint32

// The error values.
const (
	EPERM     Errno = 1
	EIO       Errno = 5
	ENOMEM    Errno = 12
	EINVAL    Errno = 22
	ENOSPC    Errno = 28
	EOVERFLOW Errno = 75
	ENOTSUP   Errno = 95
	ESHUTDOWN Errno = 108
)

func (e Errno) String() string {
	switch e {
	case 0:
		return "OK"
	case EPERM:
		return "EPERM"
	case EIO:
		return "EIO"
	case ENOMEM:
		return "ENOMEM"
	case EINVAL:
		return "EINVAL"
	case ENOSPC:
		return "ENOSPC"
	case EOVERFLOW:
		return "EOVERFLOW"
	case ENOTSUP:
		return "ENOTSUP"
	case ESHUTDOWN:
		return "ESHUTDOWN"
	}
	return "E?"
}

// Limits this server keeps.
const (
	// MaxString is the longest export name, description or meta context
	// query accepted (the protocol's own limit, 4096).
	MaxString = 4096
	// MaxOptionLen is the longest option payload read; a longer one
	// ends the connection.
	MaxOptionLen = 64 << 10
	// MaxPayload is the largest READ or WRITE, the maximum block size
	// advertised.
	MaxPayload = 32 << 20
)

// Sizes of fixed parts.
const (
	OptionHeaderLen = 16 // magic, option, length
	RequestLen      = 28 // magic, flags, type, cookie, offset, length
)
