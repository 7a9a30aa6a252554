package io.github.zklock.autoconfigure;

import org.jspecify.annotations.Nullable;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Finds the {@link ZooKeeperSecurityException} in a failed start's chain of causes (the bean
 * creation exceptions wrap it; it wraps what ZooKeeper or the TLS handshake said).
 */
final class SecurityFailures {

	private SecurityFailures() {
	}

	/**
	 * Return the security exception of a failed start, asserting there is one with that reason.
	 * @param failure the start's failure
	 * @param reason the expected reason
	 * @return the exception
	 */
	static ZooKeeperSecurityException of(@Nullable Throwable failure, ZooKeeperSecurityException.Reason reason) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof ZooKeeperSecurityException security) {
				assertThat(security.getReason()).as("reason of: %s", security.getMessage()).isEqualTo(reason);
				return security;
			}
		}
		throw new AssertionError("No ZooKeeperSecurityException among the causes of " + failure, failure);
	}

}
