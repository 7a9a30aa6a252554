package io.github.zklock;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

import io.github.zklock.spi.LockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;

/**
 * A registry that passes every request on to a real one and holds the asynchronous releases of
 * its grants back ({@link RegistryGrant#releaseAsync()}) until {@link #letGo()}: what a test does
 * in between happens while a release is on its way, in that order, with no timing involved. Every
 * other method of a grant is the real grant's.
 */
final class HeldUpReleases implements LockRegistry {

	private final LockRegistry delegate;

	private final CompletableFuture<Void> asked = new CompletableFuture<>();

	private final CompletableFuture<Void> gate = new CompletableFuture<>();

	HeldUpReleases(LockRegistry delegate) {
		this.delegate = delegate;
	}

	/** Completes once a grant's asynchronous release was asked for (and held back). */
	CompletableFuture<Void> asked() {
		return this.asked;
	}

	/** Send the releases held back, and the later ones at once. */
	void letGo() {
		this.gate.complete(null);
	}

	@Override
	public Optional<RegistryGrant> tryAcquire(LockTarget target) {
		return this.delegate.tryAcquire(target).map(this::heldUp);
	}

	@Override
	public @Nullable CompletableFuture<Optional<RegistryGrant>> submit(LockTarget target) {
		CompletableFuture<Optional<RegistryGrant>> submitted = this.delegate.submit(target);
		if (submitted == null) {
			return null;
		}
		CompletableFuture<Optional<RegistryGrant>> granted = submitted.thenApply((grant) -> grant.map(this::heldUp));
		granted.whenComplete((grant, ex) -> {
			if (granted.isCancelled()) {
				submitted.cancel(false);
			}
		});
		return granted;
	}

	@Override
	public String lockPath(String key) {
		return this.delegate.lockPath(key);
	}

	private RegistryGrant heldUp(RegistryGrant grant) {
		AtomicReference<CompletableFuture<Void>> release = new AtomicReference<>();
		return (RegistryGrant) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { RegistryGrant.class },
				(proxy, method, args) -> {
					switch (method.getName()) {
						case "releaseAsync" -> {
							release.compareAndSet(null, this.gate.thenCompose((ignored) -> grant.releaseAsync()));
							this.asked.complete(null);
							return release.get();
						}
						case "equals" -> {
							return proxy == args[0];
						}
						case "hashCode" -> {
							return System.identityHashCode(proxy);
						}
						case "toString" -> {
							return "held up " + grant;
						}
						default -> {
							try {
								return method.invoke(grant, args);
							}
							catch (InvocationTargetException ex) {
								throw ex.getCause();
							}
						}
					}
				});
	}

}
