package io.github.zklock.curator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockState;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;

import static io.github.zklock.curator.Admins.handedOver;

/**
 * Threads of one application taking one key in turns until stopped, each grant held for a moment
 * inside a shared {@link Section} (if it is held when granted): with local hand-off on, a chain of
 * grants on one znode. Records every grant; one lost between its hand-out and the reading of its
 * fencing token (a {@link LockLostException}: revoked, or ended by a ceiling, meanwhile) is
 * recorded as not held. Any other {@link LockException} fails the load, unless it was
 * {@linkplain #startRetrying started retrying} (through a session loss, say). Shared by the tests
 * of the {@code curator} and {@code chaos} packages.
 */
public final class ChainLoad implements AutoCloseable {

	/**
	 * One grant of the load.
	 * @param grantedAt {@link System#nanoTime()} just after {@code tryAcquire} returned it
	 * @param token its fencing token, -1 if it could not be read (no longer held)
	 * @param local whether it was handed over locally
	 * @param held whether it was held when granted
	 * @param thread the thread it was granted to
	 */
	public record Grant(long grantedAt, long token, boolean local, boolean held, String thread) {
	}

	/**
	 * The holders of one key, across applications: counts the times one entered while another was
	 * inside, and among those the untold ones: both grants still HELD as the second entered (a
	 * holder whose grant was ended, by a revocation or its ceiling, is told LOST before the next
	 * is granted, and may still finish its work).
	 */
	public static final class Section {

		private final AtomicInteger overlaps = new AtomicInteger();

		private final List<String> untold = new CopyOnWriteArrayList<>();

		/** The grants inside, {@code null} for a holder that entered without one (guarded by itself). */
		private final List<@Nullable LockHandle> inside = new ArrayList<>();

		/** Enter without a grant to check; counts an overlap if somebody else is inside. */
		public void enter() {
			enter(null);
		}

		/**
		 * Enter with a grant; counts an overlap if somebody else is inside, and notes it as untold
		 * when both grants are HELD.
		 */
		public void enter(@Nullable LockHandle handle) {
			synchronized (this.inside) {
				if (!this.inside.isEmpty()) {
					this.overlaps.incrementAndGet();
					for (LockHandle other : this.inside) {
						if (other != null && handle != null && other.state() == LockState.HELD
								&& handle.state() == LockState.HELD) {
							this.untold.add(other + " and " + handle);
						}
					}
				}
				this.inside.add(handle);
			}
		}

		public void leave() {
			leave(null);
		}

		public void leave(@Nullable LockHandle handle) {
			synchronized (this.inside) {
				this.inside.remove(handle);
			}
		}

		/**
		 * Hold the section for a while, as work under the lock.
		 * @param hold how long
		 */
		public void hold(Duration hold) {
			hold(null, hold);
		}

		/**
		 * Hold the section for a while with a grant, as work under the lock.
		 * @param handle the grant, checked against the others inside
		 * @param hold how long
		 */
		public void hold(@Nullable LockHandle handle, Duration hold) {
			enter(handle);
			try {
				LockSupport.parkNanos(hold.toNanos());
			}
			finally {
				leave(handle);
			}
		}

		/** @return how often somebody entered while another was inside */
		public int overlaps() {
			return this.overlaps.get();
		}

		/** @return the overlaps of two grants that were both HELD, neither holder told */
		public List<String> untoldOverlaps() {
			return List.copyOf(this.untold);
		}

	}

	private static final String THREAD_PREFIX = "chain-";

	private final List<Grant> grants = new ArrayList<>();

	private final List<Thread> threads = new ArrayList<>();

	private final AtomicBoolean stop = new AtomicBoolean();

	private final AtomicReference<Throwable> failure = new AtomicReference<>();

	private final List<String> lockExceptions = new CopyOnWriteArrayList<>();

	private final boolean retrying;

	/** Whether a holder releases only once another thread of the load waits for the key. */
	private final boolean relay;

	private ChainLoad(boolean retrying, boolean relay) {
		this.retrying = retrying;
		this.relay = relay;
	}

	/**
	 * Start the load.
	 * @param registry the application's registry
	 * @param request what each thread asks for, with a wait time long enough to be granted
	 * @param threadCount how many threads
	 * @param hold how long each grant is held, inside the section
	 * @param section the section shared with the other holders of the key
	 * @return the running load
	 */
	public static ChainLoad start(CuratorLockRegistry registry, LockTarget request, int threadCount, Duration hold,
			Section section) {
		return start(registry, request, threadCount, hold, section, false, false);
	}

	/**
	 * Start a load whose threads note a {@link LockException} and try again 20 ms later.
	 * @see #start(CuratorLockRegistry, LockTarget, int, Duration, Section)
	 */
	public static ChainLoad startRetrying(CuratorLockRegistry registry, LockTarget request, int threadCount,
			Duration hold, Section section) {
		return start(registry, request, threadCount, hold, section, true, false);
	}

	/**
	 * Start a load of two threads in relay: a holder releases its grant only once the other thread
	 * waits for the key (held grants only; a lost one is released at once), so that with local
	 * hand-off on the chain's znode never ends for want of a waiter: it ends when something ends it
	 * (a revocation, a ceiling, the hand-off bounds), or when the load stops.
	 * @see #start(CuratorLockRegistry, LockTarget, int, Duration, Section)
	 * @throws AssertionError (from {@link #close()}) if a holder saw no other thread wait within
	 * the request's wait time
	 */
	public static ChainLoad startRelay(CuratorLockRegistry registry, LockTarget request, Duration hold,
			Section section) {
		return start(registry, request, 2, hold, section, false, true);
	}

	private static ChainLoad start(CuratorLockRegistry registry, LockTarget request, int threadCount, Duration hold,
			Section section, boolean retrying, boolean relay) {
		ChainLoad load = new ChainLoad(retrying, relay);
		for (int i = 0; i < threadCount; i++) {
			Thread thread = new Thread(() -> load.run(registry, request, hold, section), THREAD_PREFIX + i);
			load.threads.add(thread);
			thread.start();
		}
		return load;
	}

	private void run(CuratorLockRegistry registry, LockTarget request, Duration hold, Section section) {
		try {
			while (!this.stop.get()) {
				Optional<RegistryGrant> granted;
				try {
					granted = registry.tryAcquire(request);
				}
				catch (LockException ex) {
					if (!this.retrying) {
						throw ex;
					}
					this.lockExceptions.add(ex.toString());
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
					continue;
				}
				if (granted.isEmpty()) {
					throw new AssertionError("not granted within its wait time: " + request);
				}
				LockHandle handle = granted.get();
				try {
					boolean held = handle.isHeld();
					long token = -1;
					try {
						token = handle.fencingToken();
					}
					catch (LockLostException ex) {
						// Revoked (or ended by a ceiling) since it was handed out: the holder hears it
						// here, as a holder must, and the registry told it (a LOST event the tests count).
						held = false;
					}
					catch (LockException ex) {
						if (!this.retrying) {
							throw ex;
						}
						held = false;
					}
					Grant grant = new Grant(System.nanoTime(), token, handedOver(handle), held,
							Thread.currentThread().getName());
					synchronized (this.grants) {
						this.grants.add(grant);
					}
					if (held) {
						section.hold(handle, hold);
						if (this.relay) {
							awaitAnotherWaiter(registry, request, handle);
						}
					}
				}
				finally {
					handle.release();
				}
			}
		}
		catch (Throwable ex) {
			this.failure.compareAndSet(null, ex);
		}
	}

	/**
	 * Wait until another thread of the load waits for the key, the grant is no longer held (lost:
	 * the other thread may then be granted on a new znode, and waits for this one), or the load
	 * stops.
	 */
	private void awaitAnotherWaiter(CuratorLockRegistry registry, LockTarget request, LockHandle handle) {
		String path = registry.lockPath(request.key());
		String self = Thread.currentThread().getName();
		long deadline = System.nanoTime() + request.waitTime().toNanos();
		while (!this.stop.get() && handle.isHeld() && Admins.admin(registry)
			.describeWaitingLocks()
			.stream()
			.noneMatch((waiting) -> waiting.path().equals(path) && !waiting.waiter().equals(self)
					&& waiting.waiter().startsWith(THREAD_PREFIX))) {
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError(self + ": no other thread of the relay waited for " + path + " within "
						+ request.waitTime());
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

	/** @return the lock exceptions the threads retried after, if {@linkplain #startRetrying retrying} */
	public List<String> lockExceptions() {
		return List.copyOf(this.lockExceptions);
	}

	/** @return the grants so far, in the order they were recorded */
	public List<Grant> grants() {
		synchronized (this.grants) {
			return List.copyOf(this.grants);
		}
	}

	/** @return how many grants so far */
	public int count() {
		synchronized (this.grants) {
			return this.grants.size();
		}
	}

	/** @return how many grants so far were handed over locally */
	public long localCount() {
		return grants().stream().filter(Grant::local).count();
	}

	/**
	 * Stop the threads after their current grant, wait for them, and throw what failed in them.
	 * Calling it again does nothing.
	 * @throws AssertionError if a thread failed or did not stop within ten seconds
	 */
	@Override
	public void close() throws InterruptedException {
		if (this.stop.getAndSet(true)) {
			return;
		}
		for (Thread thread : this.threads) {
			thread.join(TimeUnit.SECONDS.toMillis(10));
			if (thread.isAlive()) {
				thread.interrupt();
				throw new AssertionError(thread.getName() + " did not stop within 10 s");
			}
		}
		Throwable failed = this.failure.get();
		if (failed != null) {
			throw new AssertionError("a thread of the chain failed", failed);
		}
	}

}
