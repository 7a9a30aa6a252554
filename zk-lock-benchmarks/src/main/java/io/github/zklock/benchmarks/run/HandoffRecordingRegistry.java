package io.github.zklock.benchmarks.run;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import io.github.zklock.spi.LockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;

/**
 * A {@link LockRegistry} that hands its delegate's grants through unchanged and notes, for the
 * calling thread, whether the last one was handed over locally ({@link RegistryGrant#isLocalHandoff()}):
 * how {@link HotKeyWorker} counts local hand-offs without observations, at the cost of one
 * thread-local write per grant. The template asks the registry on the calling thread, for a
 * synchronous grant ({@link #tryAcquire}) and for the start of an asynchronous one
 * ({@link #submit}), so the caller reads what it noted right after, on the same thread.
 */
final class HandoffRecordingRegistry implements LockRegistry {

	private final LockRegistry delegate;

	private final ThreadLocal<Boolean> lastLocalHandoff = ThreadLocal.withInitial(() -> false);

	private final ThreadLocal<@Nullable CompletableFuture<Optional<RegistryGrant>>> lastSubmitted = new ThreadLocal<>();

	HandoffRecordingRegistry(LockRegistry delegate) {
		this.delegate = delegate;
	}

	@Override
	public Optional<RegistryGrant> tryAcquire(LockTarget target) {
		Optional<RegistryGrant> grant = this.delegate.tryAcquire(target);
		this.lastLocalHandoff.set(grant.isPresent() && grant.get().isLocalHandoff());
		return grant;
	}

	@Override
	public @Nullable CompletableFuture<Optional<RegistryGrant>> submit(LockTarget target) {
		CompletableFuture<Optional<RegistryGrant>> pending = this.delegate.submit(target);
		this.lastSubmitted.set(pending);
		return pending;
	}

	@Override
	public String lockPath(String key) {
		return this.delegate.lockPath(key);
	}

	/**
	 * Return whether the calling thread's last synchronous grant was handed over locally.
	 * @return whether it rode the znode of an earlier grant
	 */
	boolean lastWasLocalHandoff() {
		return this.lastLocalHandoff.get();
	}

	/**
	 * Return, and forget, the calling thread's last asynchronous acquisition.
	 * @return what the delegate's {@code submit} returned
	 * @throws IllegalStateException if the thread started none since it last asked
	 */
	CompletableFuture<Optional<RegistryGrant>> takeSubmitted() {
		CompletableFuture<Optional<RegistryGrant>> pending = this.lastSubmitted.get();
		if (pending == null) {
			throw new IllegalStateException("No asynchronous acquisition started on this thread");
		}
		this.lastSubmitted.remove();
		return pending;
	}

}
