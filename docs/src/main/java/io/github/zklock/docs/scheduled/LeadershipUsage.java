package io.github.zklock.docs.scheduled;

import java.time.Duration;

import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

import io.github.zklock.Leadership;
import io.github.zklock.LeadershipRevokedEvent;

/**
 * The guide's programmatic leadership.
 */
@Component
public class LeadershipUsage {

	private final Leadership leadership;

	private volatile boolean revoked;

	/**
	 * @param leadership the application's leadership
	 */
	public LeadershipUsage(Leadership leadership) {
		this.leadership = leadership;
	}

	/**
	 * Wait to lead the group "import", then hand leadership on.
	 * @return whether this instance led within the wait
	 * @throws InterruptedException if interrupted while waiting
	 */
	public boolean importOnce() throws InterruptedException {
		// tag::await[]
		if (this.leadership.awaitLeadership("import", Duration.ofSeconds(30))) {
			try {
				// lead the import
			}
			finally {
				this.leadership.yieldLeadership("import"); // the next participant leads
			}
			return true;
		}
		// end::await[]
		return false;
	}

	// tag::event[]
	@EventListener
	void onRevoked(LeadershipRevokedEvent event) {
		// stop the group's work that is still running here
		this.revoked = true;
	}
	// end::event[]

	/**
	 * Whether a revocation was seen.
	 * @return whether leadership of a group was revoked from this instance
	 */
	public boolean sawRevocation() {
		return this.revoked;
	}

}
