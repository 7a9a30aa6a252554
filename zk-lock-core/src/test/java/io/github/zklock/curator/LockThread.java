package io.github.zklock.curator;

import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.github.zklock.LockHandle;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;

/**
 * A thread of an application that a test tells what to do, one task after the other: acquire,
 * release (thread-bound grants must be released by their thread), anything else. Lets a test
 * order the grants of several threads of one application. Results wait at most ten seconds.
 * Shared by the tests of the {@code curator} and {@code chaos} packages.
 */
public final class LockThread implements AutoCloseable {

	private static final long TIMEOUT_SECONDS = 10;

	private final ExecutorService executor;

	/**
	 * Start the thread.
	 * @param name the thread's name (the holder of its grants in held-lock snapshots)
	 */
	public LockThread(String name) {
		this.executor = Executors.newSingleThreadExecutor((task) -> new Thread(task, name));
	}

	/**
	 * Ask for a grant on this thread, without waiting for the answer.
	 * @param registry the application's registry
	 * @param request what to lock
	 * @return the answer of {@code tryAcquire}, once it comes
	 */
	public CompletableFuture<Optional<RegistryGrant>> tryAcquire(CuratorLockRegistry registry, LockTarget request) {
		return submit(() -> registry.tryAcquire(request));
	}

	/**
	 * Acquire on this thread and wait for the grant.
	 * @param registry the application's registry
	 * @param request what to lock
	 * @return the grant
	 * @throws AssertionError if not granted within its wait time
	 */
	public LockHandle acquire(CuratorLockRegistry registry, LockTarget request) throws Exception {
		return call(() -> registry.tryAcquire(request)).orElseThrow(() -> new AssertionError("not granted: " + request));
	}

	/**
	 * Release a grant on this thread and wait until it is released.
	 * @param handle a grant made on this thread
	 */
	public void release(LockHandle handle) throws Exception {
		call(() -> {
			handle.release();
			return null;
		});
	}

	/**
	 * Run a task on this thread and wait for its result.
	 * @param task the task
	 * @return its result
	 * @throws Exception what the task threw, as it threw it
	 */
	public <T> T call(Callable<T> task) throws Exception {
		try {
			return submit(task).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			if (cause instanceof CompletionException && cause.getCause() != null) {
				cause = cause.getCause();
			}
			if (cause instanceof Exception exception) {
				throw exception;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw ex;
		}
	}

	/**
	 * Run a task on this thread, after the tasks given before, without waiting for it.
	 * @param task the task
	 * @return its result, once it comes
	 */
	public <T> CompletableFuture<T> submit(Callable<T> task) {
		return CompletableFuture.supplyAsync(() -> {
			try {
				return task.call();
			}
			catch (RuntimeException ex) {
				throw ex;
			}
			catch (Exception ex) {
				throw new CompletionException(ex);
			}
		}, this.executor);
	}

	/** Interrupt what the thread does and stop it. */
	@Override
	public void close() throws InterruptedException {
		this.executor.shutdownNow();
		this.executor.awaitTermination(TIMEOUT_SECONDS, TimeUnit.SECONDS);
	}

}
