package auth

// profileText returns what "profile NAME" means for service, in the cap
// grammar (allow grants only). Ceph's documented profiles are osd and mds
// on monitors; Cuttle adds the others so every entity type has a profile
// for every service it talks to.
func profileText(service, name string) (string, bool) {
	switch service + " " + name {
	case "mon mon", "mon admin",
		"osd osd", "osd mon", "osd mgr", "osd admin",
		"mds mds", "mds mon", "mds admin",
		"mgr mgr", "mgr mon", "mgr admin":
		return "allow *", true
	case "mon osd":
		// Boot, report failures and liveness, ask for pg_temp, report
		// PG stats, log.
		return `allow r, allow command "osd boot", allow command "osd alive", allow command "osd failure", allow command "osd markmedown", allow command "osd pg-temp", ` +
			`allow command "osd beacon", allow command "pg report", allow command "log"`, true
	case "mon mds":
		// Beacons, and blocklisting: the previous holder of a rank it
		// takes over, and the clients it evicts.
		return `allow r, allow command "mds beacon", allow command "osd blocklist add", allow command "log"`, true
	case "mon mgr":
		return `allow r, allow command "mgr beacon", allow command "log"`, true
	case "mon client", "mgr client", "mgr osd", "mgr mds":
		return "allow r", true
	case "osd client", "osd mds":
		// Data, class methods; the mds keeps its journal and directories in RADOS.
		return "allow rwx", true
	case "mds client":
		return "allow rw", true
	}
	return "", false
}
