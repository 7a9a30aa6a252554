package io.github.zklock.curator;

import org.jspecify.annotations.Nullable;

/**
 * A lock znode this application holds, as its grants see it: the grants of one local hand-off
 * chain share it, and so do the nested grants of a thread.
 */
final class LockZnode {

	/** The znode's full path. */
	final String path;

	/** The session instance it belongs to ({@link ZnodeAcquisition#UNKNOWN_SESSION} if not known). */
	final long session;

	/** Since when, in {@link System#nanoTime()} of the key's clock, this application holds it. */
	final long heldSince;

	/** The czxid, its fencing token; 0 until known (a create found again after a connection loss). */
	private volatile long czxid;

	/** Why it may no longer be held: revoked, deleted by another client, past a ceiling; {@code null} while it may. */
	private volatile @Nullable String endedBy;

	LockZnode(String path, long session, long czxid, long heldSince) {
		this.path = path;
		this.session = session;
		this.czxid = czxid;
		this.heldSince = heldSince;
	}

	long czxid() {
		return this.czxid;
	}

	/** Remember the czxid once read, for the grants that share the znode. */
	void czxid(long czxid) {
		this.czxid = czxid;
	}

	@Nullable String endedBy() {
		return this.endedBy;
	}

	void endedBy(String reason) {
		this.endedBy = reason;
	}

}
