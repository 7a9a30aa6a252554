package io.github.zklock.docs.async;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import reactor.core.publisher.Mono;

import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.LockResult;
import io.github.zklock.LockTemplate;
import io.github.zklock.OnBusy;
import io.github.zklock.reactive.ReactiveLockOperator;

/**
 * The guide's programmatic asynchronous and reactive locking.
 */
public class AsyncUsage {

	private final LockTemplate lockTemplate;

	/**
	 * @param lockTemplate the template
	 */
	public AsyncUsage(LockTemplate lockTemplate) {
		this.lockTemplate = lockTemplate;
	}

	/**
	 * A key-first asynchronous run.
	 * @return the work's result, completed after the release
	 */
	public CompletableFuture<String> charge() {
		// tag::execute-async[]
		CompletableFuture<String> receipt = this.lockTemplate.executeAsync("/orders/42", LockMode.EXCLUSIVE,
				Duration.ofSeconds(5), (handle) -> chargeAsync(handle.fencingToken()));
		// end::execute-async[]
		return receipt;
	}

	/**
	 * An asynchronous run of a request, which may be skipped.
	 * @return the outcome
	 */
	public CompletableFuture<LockResult<String>> chargeUnlessBusy() {
		// tag::async-request[]
		LockRequest request = LockRequest.of("/orders/42").withWaitTime(Duration.ZERO).withOnBusy(OnBusy.SKIP);
		CompletableFuture<LockResult<String>> outcome = this.lockTemplate.async()
			.execute(request, (handle) -> chargeAsync(handle.fencingToken()));
		// end::async-request[]
		return outcome;
	}

	/**
	 * A {@code Mono} under a lock, per subscription.
	 * @return the locked {@code Mono}
	 */
	public Mono<String> chargeReactively() {
		// tag::operator[]
		ReactiveLockOperator locks = ReactiveLockOperator.create(this.lockTemplate);
		Mono<String> receipt = locks.lock(LockRequest.of("/orders/42"), Mono.fromFuture(() -> chargeAsync(0)));
		// end::operator[]
		return receipt;
	}

	private CompletableFuture<String> chargeAsync(long fencingToken) {
		return CompletableFuture.supplyAsync(() -> "charged with token " + fencingToken);
	}

}
