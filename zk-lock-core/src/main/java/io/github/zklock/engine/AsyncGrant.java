package io.github.zklock.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.LockHandle;
import io.github.zklock.LockState;

/**
 * A grant made on a thread of {@link GrantThreads} for an asynchronous request, when the registry
 * cannot acquire without a thread ({@link io.github.zklock.spi.LockRegistry#submit} gives
 * {@code null}): any thread may release it. A grant bound to the thread that made it is released
 * by that thread, which parks in {@link #holdUntilReleased()} until asked to; a grant bound to no
 * thread is released on a grant thread, so that the caller does not wait for ZooKeeper.
 */
final class AsyncGrant extends ForwardingLockHandle implements AsyncLockHandle {

	/** The thread that acquired a thread-bound grant and must release it; {@code null} if not bound. */
	private final @Nullable Thread owner;

	private final CompletableFuture<Void> releaseRequested = new CompletableFuture<>();

	private final CompletableFuture<Void> released = new CompletableFuture<>();

	private final CompletableFuture<Void> lost = new CompletableFuture<>();

	private final AtomicBoolean releasing = new AtomicBoolean();

	/** Where a grant that is not bound to a thread is released without blocking the caller. */
	private final Executor grantThreads;

	AsyncGrant(Grant grant, @Nullable Thread owner, Executor grantThreads) {
		super(grant);
		this.owner = owner;
		this.grantThreads = grantThreads;
		grant.whenLost().thenRun(() -> this.lost.complete(null));
	}

	/**
	 * Park the owner thread until a release is asked for, then release on it. An interrupt while
	 * parked is the registry's signal that the grant was lost (interrupt-on-lost): it completes
	 * {@link #whenLost()} and the thread goes on waiting for the release.
	 */
	void holdUntilReleased() {
		if (this.delegate.state() == LockState.LOST) {
			// Lost before this thread parked: its interrupt may have been cleared with a cancellation's.
			this.lost.complete(null);
		}
		while (true) {
			try {
				this.releaseRequested.get();
				break;
			}
			catch (InterruptedException ex) {
				if (this.delegate.state() == LockState.LOST) {
					this.lost.complete(null);
				}
			}
			catch (ExecutionException ex) {
				break;
			}
		}
		// An interrupt that arrives after the grant ended must not reach this thread's next task.
		Thread.interrupted();
		releaseNow();
	}

	/** Release on this thread, once; later calls return at once. */
	void releaseNow() {
		if (!this.releasing.compareAndSet(false, true)) {
			return;
		}
		try {
			this.delegate.release();
			this.released.complete(null);
		}
		catch (Throwable ex) {
			this.released.completeExceptionally(ex);
		}
	}

	@Override
	public CompletableFuture<Void> releaseAsync() {
		if (this.owner == null) {
			if (!this.releasing.get()) {
				// Not bound: released on a grant thread, so that the caller does not wait for ZooKeeper.
				this.grantThreads.execute(this::releaseNow);
			}
		}
		else if (this.owner == Thread.currentThread()) {
			// The owner itself (an action run on the grant's thread before it parked).
			this.releaseRequested.complete(null);
			releaseNow();
		}
		else {
			this.releaseRequested.complete(null);
		}
		return this.released;
	}

	@Override
	public void release() {
		if (this.owner == null || this.owner == Thread.currentThread()) {
			this.releaseRequested.complete(null);
			releaseNow();
		}
		else {
			releaseAsync();
		}
		boolean interrupted = false;
		try {
			while (true) {
				try {
					this.released.get();
					return;
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
				catch (ExecutionException ex) {
					throw asRuntime(ex.getCause());
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	@Override
	public CompletionStage<Void> whenLost() {
		return this.lost.minimalCompletionStage();
	}

	/** Any thread may release an asynchronous grant: it may be kept whatever it wraps. */
	@Override
	public LockHandle keepAtLeast(Duration lockAtLeastFor) {
		return KeptLockHandle.keep(this, lockAtLeastFor);
	}

	@Override
	public String toString() {
		return "async " + this.delegate;
	}

	private static RuntimeException asRuntime(Throwable ex) {
		if (ex instanceof RuntimeException runtime) {
			return runtime;
		}
		if (ex instanceof Error error) {
			throw error;
		}
		return new IllegalStateException(ex);
	}

}
