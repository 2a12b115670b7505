package wire

// Message type numbers, as msgr.Message.Type carries them. Numbers are
// never reused; a receiver drops (and logs) types it does not know.
const (
	// Monitor protocol (monmsg.go).
	TypeMonCommand      uint16 = 1 // client -> mon: a command
	TypeMonCommandReply uint16 = 2 // mon -> client: its reply
	TypeMonSubscribe    uint16 = 3 // client -> mon: send maps from an epoch
	TypeOSDMapUpdate    uint16 = 4 // mon -> client: OSD map epochs
	TypeMonRaft         uint16 = 5 // mon <-> mon: a Raft message
	TypeMonPing         uint16 = 6 // mon <-> mon: liveness and clock

	// Commands to a daemon other than the monitors (cuttle tell osd.N):
	// the payloads are MonCommand and MonCommandReply.
	TypeDaemonCommand      uint16 = 8 // client -> daemon: an admin command
	TypeDaemonCommandReply uint16 = 9 // daemon -> client: its reply

	// Client I/O (osdop.go).
	TypeOSDOp       uint16 = 16 // client -> primary OSD: ops on one object
	TypeOSDOpReply  uint16 = 17 // OSD -> client: applied or committed, results
	TypeWatchNotify uint16 = 18 // primary OSD -> watcher: a notify, or a lost watch (watch.go)

	// Replication between the OSDs of a PG (pgmsg.go).
	TypeRepOp      uint16 = 32 // primary -> replica: a write's transaction
	TypeRepOpReply uint16 = 33 // replica -> primary: applied or committed
	TypeRepIdle    uint16 = 34 // primary -> replica: the committed watermark once the PG is idle

	// Failure detection between OSDs that share PGs (heartbeat.go).
	TypeOSDPing uint16 = 40 // OSD <-> OSD: a heartbeat or its answer

	// Peering and recovery (peermsg.go).
	TypePGQuery      uint16 = 48 // primary -> member: report your info and log
	TypePGNotify     uint16 = 49 // member -> primary: info and log
	TypePGPull       uint16 = 50 // primary -> authority: push me these objects
	TypePGPush       uint16 = 51 // an object's whole state, to match the sender's
	TypePGActivate   uint16 = 52 // primary -> member: adopt this info and log
	TypePGAck        uint16 = 53 // member -> primary: a push or activation committed
	TypeScrubRequest uint16 = 54 // primary -> member: send your scrub map of a range
	TypeScrubMap     uint16 = 55 // member -> primary: the scrub map
	TypePGRemove     uint16 = 56 // primary -> stray: the PG is clean without you; delete your copy
	TypePGInfo       uint16 = 57 // primary -> replica: the PG's info changed (its purged snaps)

	// Recovery reservations (reservemsg.go).
	TypePGReserve uint16 = 60 // primary <-> member: request, grant or release a recovery slot

	// The file-system client protocol (fsclientmsg.go, fsrequest.go,
	// fscaps.go), between a client and an MDS rank.
	TypeClientSession        uint16 = 80 // client <-> MDS: open, renew, close a session; stale, reject, flushmsg
	TypeClientRequest        uint16 = 81 // client -> MDS: a metadata request
	TypeClientReply          uint16 = 82 // MDS -> client: its reply, unsafe then safe
	TypeClientRequestForward uint16 = 83 // MDS -> client: resend to another rank
	TypeClientCaps           uint16 = 84 // client <-> MDS: grant, revoke, ack, update, flush, release, export, import
	TypeClientLease          uint16 = 85 // client <-> MDS: a dentry lease revoked, renewed or released
	TypeClientReconnect      uint16 = 86 // client -> MDS: caps and locks held, after a failover
)
