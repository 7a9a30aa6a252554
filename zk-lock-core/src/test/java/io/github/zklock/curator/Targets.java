package io.github.zklock.curator;

import java.util.Objects;

import io.github.zklock.LockRequest;
import io.github.zklock.spi.LockTarget;

/**
 * Lock targets as requests, for tests that take the same lock through a registry and through a
 * template.
 */
public final class Targets {

	private Targets() {
	}

	/**
	 * Return the request of one key that asks what a target asks.
	 * @param target the target
	 * @return the request, with the target's wait time
	 */
	public static LockRequest asRequest(LockTarget target) {
		LockRequest request = target.isPermit() ? LockRequest.permit(target.key(), target.permits())
				: LockRequest.of(target.key()).withMode(target.mode()).withReentrant(target.reentrant());
		return request.withWaitTime(target.waitTime());
	}

	/**
	 * Return the target of a request of one key whose wait time is given.
	 * @param request the request
	 * @return the target
	 */
	public static LockTarget asTarget(LockRequest request) {
		return new LockTarget(request.keys().get(0), request.mode(), request.reentrant(), request.permits(),
				Objects.requireNonNull(request.waitTime(), "the request's wait time"));
	}

}
