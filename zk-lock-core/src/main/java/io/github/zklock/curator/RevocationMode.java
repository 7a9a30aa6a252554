package io.github.zklock.curator;

/**
 * How {@link CuratorLockAdmin#revoke} makes the holders of a lock give it up.
 */
public enum RevocationMode {

	/**
	 * Curator's revocation protocol ({@code Revoker.attemptRevoke}): the data of each holder's
	 * znode is set to {@code __REVOKE__}; a holder that watches its znode gives the lock up (this
	 * library's registries do, for grants held longer than their revocation check interval; raw
	 * Curator holders that called {@code makeRevocable} run their listener).
	 */
	REQUEST,

	/**
	 * Delete the holders' znodes (guaranteed delete): their waiters are granted at once; a holder
	 * of this library learns it through its watch and its grant becomes LOST, any other holder is
	 * not told.
	 */
	FORCE

}
