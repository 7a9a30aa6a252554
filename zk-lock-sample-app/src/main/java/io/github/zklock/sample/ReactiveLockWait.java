package io.github.zklock.sample;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * The reactive counterpart of {@link LockWaitTimer}: how long a reactive purchase waited before its
 * method body started, from the controller's call to the moment the lock advice, once granted,
 * invoked the service method. A reactive purchase runs on several threads one after the other, so
 * the timer travels in the Reactor context of the purchase's subscription, not in a thread local.
 */
final class ReactiveLockWait {

	private static final String KEY = ReactiveLockWait.class.getName();

	private final long started = System.nanoTime();

	/** When the body started, 0 until then; set once, from another thread than the reader's. */
	private final AtomicLong bodyStarted = new AtomicLong();

	private ReactiveLockWait() {
	}

	/**
	 * Start timing, just before calling the service.
	 * @return the timer, to put in the subscriber's context with {@link #addTo(Context)}
	 */
	static ReactiveLockWait start() {
		return new ReactiveLockWait();
	}

	/**
	 * Return a context with this timer.
	 * @param context the subscriber's context
	 * @return the context with this timer
	 */
	Context addTo(Context context) {
		return context.put(KEY, this);
	}

	/**
	 * Record that the body of the guarded method starts. Has no effect without a timer in the
	 * context (the service called from elsewhere) or when already recorded.
	 * @param context the context of the method's publisher
	 */
	static void bodyStarted(ContextView context) {
		ReactiveLockWait timer = context.getOrDefault(KEY, null);
		if (timer != null) {
			timer.bodyStarted.compareAndSet(0, System.nanoTime());
		}
	}

	/**
	 * Return the wait.
	 * @return the time from {@link #start()} to {@link #bodyStarted(ContextView)}, or empty when
	 * the body did not start (the lock was not granted, or the call failed before)
	 */
	Optional<Duration> waited() {
		long body = this.bodyStarted.get();
		return (body == 0) ? Optional.empty() : Optional.of(Duration.ofNanos(body - this.started));
	}

}
