package io.github.zklock.autoconfigure.actuate;

import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.config.MeterFilterReply;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Caps the distinct values of the {@code name} tag of the {@code zk.lock} meters
 * ({@link MeterFilter#maximumAllowableTags}): beyond the cap no further meter is made, and a
 * warning says so once. A request's name defaults to its keys, so that without it an application
 * locking one key per entity through {@code LockTemplate} would keep a timer per key in memory.
 */
final class LockNameTagLimit {

	private static final Log logger = LogFactory.getLog(LockNameTagLimit.class);

	private LockNameTagLimit() {
	}

	/**
	 * The filter.
	 * @param maxNames the most distinct names
	 * @return a filter denying meters of further names
	 */
	static MeterFilter of(int maxNames) {
		AtomicBoolean warned = new AtomicBoolean();
		MeterFilter denyWithWarning = new MeterFilter() {

			@Override
			public MeterFilterReply accept(Meter.Id id) {
				if (warned.compareAndSet(false, true)) {
					logger.warn("Reached the limit of " + maxNames + " lock names in the zk.lock meters; meters of "
							+ "further names are not made (last one: '" + id.getTag("name") + "'). Name requests "
							+ "whose keys come from data with LockRequest.withName (an annotated method's key "
							+ "template is its name), or raise zk.lock.metrics.max-names");
				}
				return MeterFilterReply.DENY;
			}

		};
		return MeterFilter.maximumAllowableTags("zk.lock", "name", maxNames, denyWithWarning);
	}

}
