package io.github.zklock.curator;

import java.time.Duration;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;

/**
 * Awaitility's {@code await()} as the tests of a real server poll: the condition is evaluated at
 * once, then every {@link #INTERVAL}. Awaitility's own default first waits 100 ms and then looks
 * every 100 ms, so that a condition already true costs 100 ms and one that becomes true just
 * after a look up to 100 ms more; over the awaits of a build that is minutes (issue 45). A call
 * that sets its own poll interval keeps it.
 */
public final class Polling {

	/**
	 * How often a condition is evaluated again. Many conditions read ZooKeeper (a tree of znodes,
	 * a queue), from the test's JVM, which runs the server too: every 20 ms keeps those reads from
	 * crowding a loaded machine's two cores, for 10 ms on average once a condition holds.
	 */
	public static final Duration INTERVAL = Duration.ofMillis(20);

	private Polling() {
	}

	/**
	 * Return a condition factory that evaluates its condition at once and then every
	 * {@link #INTERVAL}, with Awaitility's other defaults (set {@code atMost} as usual).
	 * @return the condition factory
	 */
	public static ConditionFactory await() {
		return Awaitility.await().pollDelay(Duration.ZERO).pollInterval(INTERVAL);
	}

}
