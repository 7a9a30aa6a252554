package io.github.zklock.curator;

/**
 * What a revocation did ({@link Revocation#action()}).
 */
public enum RevocationAction {

	/** Nobody held the lock: nothing was written. */
	NOT_HELD,

	/**
	 * Curator's revocation protocol: the holders' znodes were marked ({@code Revoker}); a holder
	 * that watches its znode gives the lock up and deletes it.
	 */
	REVOCATION_REQUESTED,

	/** The holders' znodes were deleted. */
	FORCED_DELETE

}
