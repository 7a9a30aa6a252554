package io.github.zklock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.util.ReflectionUtils;

import io.github.zklock.LockMode;
import io.github.zklock.LockRequest;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.expression.LockPathExpressionEvaluator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * How {@code lockAtMostFor} of {@code @DistributedLock} and {@code @DistributedSemaphore} is read
 * into the method's prototype request: left out it is {@code null} (the template's default
 * applies), {@code "none"} ({@link DistributedLock#NO_CEILING}) is {@link LockRequest#NO_CEILING},
 * every duration style and placeholders are read as {@code lockAtLeastFor} is; it changes neither
 * the kind nor the reentrancy of the lock; a malformed, zero or negative value, or one shorter than
 * {@code lockAtLeastFor}, is rejected naming the method and the attribute (zero pointing to
 * {@code "none"}), also at the start of a plain Spring context. No ZooKeeper
 * involved: the behaviour at the ceiling is tested in {@link LockAtMostForMethodTests}.
 */
class LockAtMostForDeclarationTests {

	private final LockOperationSource source = new LockOperationSource(new LockPathExpressionEvaluator(null));

	@BeforeEach
	void placeholders() {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources()
			.addFirst(new MapPropertySource("test",
					Map.of("lock.ceiling", "PT45S", "lock.no-ceiling", "none", "lock.zero", "0")));
		this.source.setEmbeddedValueResolver(environment::resolvePlaceholders);
	}

	@Test
	void leftOutItIsTheTemplatesDefaultAndNoneIsNoCeiling() {
		assertThat(lock("notGiven").prototype().lockAtMostFor()).isNull();
		assertThat(lock("empty").prototype().lockAtMostFor()).isNull();
		assertThat(lock("none").prototype().lockAtMostFor()).isEqualTo(LockRequest.NO_CEILING);
		assertThat(lock("placeholderOfNone").prototype().lockAtMostFor()).isEqualTo(LockRequest.NO_CEILING);
		assertThat(lock("placeholderWithEmptyDefault").prototype().lockAtMostFor()).as("resolved to empty").isNull();
		assertThat(lock("semaphoreNotGiven").prototype().lockAtMostFor()).isNull();
		assertThat(lock("semaphoreNone").prototype().lockAtMostFor()).isEqualTo(LockRequest.NO_CEILING);
		// No ceiling is not shorter than any lockAtLeastFor.
		assertThat(lock("keptWithoutCeiling").prototype().lockAtMostFor()).isEqualTo(LockRequest.NO_CEILING);
	}

	@Test
	void isReadInEveryDurationStyleAndWithPlaceholders() {
		assertThat(lock("iso").prototype().lockAtMostFor()).isEqualTo(Duration.ofSeconds(2));
		assertThat(lock("simple").prototype().lockAtMostFor()).isEqualTo(Duration.ofMillis(1500));
		assertThat(lock("plainMillis").prototype().lockAtMostFor()).isEqualTo(Duration.ofMillis(800));
		assertThat(lock("minutes").prototype().lockAtMostFor()).isEqualTo(Duration.ofMinutes(5));
		assertThat(lock("placeholder").prototype().lockAtMostFor()).isEqualTo(Duration.ofSeconds(45));
		assertThat(lock("semaphore").prototype().lockAtMostFor()).isEqualTo(Duration.ofSeconds(3));
		assertThat(lock("semaphore").prototype().isPermit()).isTrue();
	}

	@Test
	void changesNeitherTheKindNorTheReentrancy() {
		LockRequest ceiling = lock("iso").prototype();
		assertThat(ceiling.reentrant()).as("unlike lockAtLeastFor, it does not make the lock non-reentrant").isTrue();
		assertThat(ceiling.mode()).isEqualTo(LockMode.EXCLUSIVE);
		assertThat(lock("read").prototype().lockAtMostFor()).isEqualTo(Duration.ofSeconds(1));
		// A reentrant lock of the same template, without a ceiling, is the same kind.
		assertThat(lock("sameKeyWithoutCeiling")).isNotNull();
		// With lockAtLeastFor: kept at least and at most, the ceiling not shorter.
		LockRequest kept = lock("keptAndCapped").prototype();
		assertThat(kept.lockAtLeastFor()).isEqualTo(Duration.ofSeconds(1));
		assertThat(kept.lockAtMostFor()).isEqualTo(Duration.ofSeconds(1));
		assertThat(kept.reentrant()).isFalse();
	}

	@Test
	void malformedNegativeOrShorterThanLockAtLeastForIsRejectedNamingTheMethod() {
		assertThatIllegalStateException().isThrownBy(() -> lock("malformed"))
			.withMessageContaining("@DistributedLock on")
			.withMessageContaining("Invalid.malformed")
			.withMessageContaining("lockAtMostFor 'a while' is not a duration");
		assertThatIllegalStateException().isThrownBy(() -> lock("negative"))
			.withMessageContaining("@DistributedLock on")
			.withMessageContaining("Invalid.negative")
			.withMessageContaining("lockAtMostFor '-1s'")
			.withMessageContaining("written \"none\" on the annotation (DistributedLock.NO_CEILING)");
		assertThatIllegalStateException().isThrownBy(() -> lock("shorterThanLockAtLeastFor"))
			.withMessageContaining("Invalid.shorterThanLockAtLeastFor")
			.withMessageContaining("lockAtMostFor must not be shorter than lockAtLeastFor");
		assertThatIllegalStateException().isThrownBy(() -> lock("negativePermit"))
			.withMessageContaining("@DistributedSemaphore on")
			.withMessageContaining("Invalid.negativePermit")
			.withMessageContaining("written \"none\" on the annotation (DistributedSemaphore.NO_CEILING)");
		assertThatIllegalStateException().isThrownBy(() -> lock("malformedPermit"))
			.withMessageContaining("Invalid.malformedPermit")
			.withMessageContaining("lockAtMostFor '1 hour' is not a duration");
	}

	@Test
	void zeroIsRejectedNamingTheMethodAndPointingToNone() {
		// Zero once meant no ceiling; as a wait time it means one attempt: it means nothing here.
		for (String method : new String[] { "zero", "zeroSeconds", "placeholderOfZero" }) {
			assertThatIllegalStateException().isThrownBy(() -> lock(method))
				.withMessageContaining("@DistributedLock on")
				.withMessageContaining("Invalid." + method)
				.withMessageContaining("is PT0S: use a positive duration")
				.withMessageContaining("written \"none\" on the annotation (DistributedLock.NO_CEILING)")
				.withMessageContaining("leave it out for zk.lock.default-lock-at-most-for");
		}
		assertThatIllegalStateException().isThrownBy(() -> lock("zeroPermit"))
			.withMessageContaining("@DistributedSemaphore on")
			.withMessageContaining("Invalid.zeroPermit")
			.withMessageContaining("lockAtMostFor '0' is PT0S")
			.withMessageContaining("written \"none\" on the annotation (DistributedSemaphore.NO_CEILING)");
	}

	@ParameterizedTest
	@ValueSource(classes = { NegativeCeiling.class, ZeroCeiling.class, CeilingBelowFloor.class,
			NegativePermitCeiling.class, ZeroPermitCeiling.class })
	void invalidCeilingFailsTheStartNamingTheMethod(Class<?> service) {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.register(Advice.class);
			context.registerBean(service);
			assertThatExceptionOfType(BeanCreationException.class).isThrownBy(context::refresh)
				.havingRootCause()
				.isInstanceOf(IllegalStateException.class)
				.withMessageContaining(service.getSimpleName() + ".work")
				.withMessageContaining("lockAtMostFor");
		}
	}

	private LockOperation lock(String name) {
		for (Class<?> type : new Class<?>[] { Declarations.class, Invalid.class }) {
			Method method = ReflectionUtils.findMethod(type, name);
			if (method != null) {
				return this.source.getOperation(method, type);
			}
		}
		throw new IllegalArgumentException("No method " + name);
	}

	static class Declarations {

		@DistributedLock(path = "/ceiling/not-given")
		void notGiven() {
		}

		@DistributedLock(path = "/ceiling/empty", lockAtMostFor = "")
		void empty() {
		}

		@DistributedLock(path = "/ceiling/none", lockAtMostFor = DistributedLock.NO_CEILING)
		void none() {
		}

		@DistributedLock(path = "/ceiling/placeholder-none", lockAtMostFor = "${lock.no-ceiling}")
		void placeholderOfNone() {
		}

		@DistributedLock(path = "/ceiling/placeholder-empty", lockAtMostFor = "${lock.unset:}")
		void placeholderWithEmptyDefault() {
		}

		@DistributedLock(path = "/ceiling/iso", lockAtMostFor = "PT2S")
		void iso() {
		}

		@DistributedLock(path = "/ceiling/iso")
		void sameKeyWithoutCeiling() {
		}

		@DistributedLock(path = "/ceiling/simple", lockAtMostFor = "1500ms")
		void simple() {
		}

		@DistributedLock(path = "/ceiling/plain-millis", lockAtMostFor = "800")
		void plainMillis() {
		}

		@DistributedLock(path = "/ceiling/minutes", lockAtMostFor = "5m")
		void minutes() {
		}

		@DistributedLock(path = "/ceiling/placeholder", lockAtMostFor = "${lock.ceiling}")
		void placeholder() {
		}

		@DistributedLock(path = "/ceiling/read", mode = LockMode.READ, lockAtMostFor = "1s")
		void read() {
		}

		@DistributedLock(path = "/ceiling/kept", lockAtLeastFor = "1s", lockAtMostFor = "1s")
		void keptAndCapped() {
		}

		@DistributedLock(path = "/ceiling/kept", lockAtLeastFor = "1m", lockAtMostFor = DistributedLock.NO_CEILING)
		void keptWithoutCeiling() {
		}

		@DistributedSemaphore(path = "/ceiling/semaphore", permits = 2, lockAtMostFor = "3s")
		void semaphore() {
		}

		@DistributedSemaphore(path = "/ceiling/semaphore-not-given", permits = 2)
		void semaphoreNotGiven() {
		}

		@DistributedSemaphore(path = "/ceiling/semaphore-none", permits = 2,
				lockAtMostFor = DistributedSemaphore.NO_CEILING)
		void semaphoreNone() {
		}

	}

	static class Invalid {

		@DistributedLock(path = "/ceiling/malformed", lockAtMostFor = "a while")
		void malformed() {
		}

		@DistributedLock(path = "/ceiling/negative", lockAtMostFor = "-1s")
		void negative() {
		}

		@DistributedLock(path = "/ceiling/zero", lockAtMostFor = "0")
		void zero() {
		}

		@DistributedLock(path = "/ceiling/zero-seconds", lockAtMostFor = "0s")
		void zeroSeconds() {
		}

		@DistributedLock(path = "/ceiling/placeholder-zero", lockAtMostFor = "${lock.zero}")
		void placeholderOfZero() {
		}

		@DistributedSemaphore(path = "/ceiling/zero-permit", permits = 2, lockAtMostFor = "0")
		void zeroPermit() {
		}

		@DistributedLock(path = "/ceiling/below-floor", lockAtLeastFor = "2s", lockAtMostFor = "1s")
		void shorterThanLockAtLeastFor() {
		}

		@DistributedSemaphore(path = "/ceiling/negative-permit", permits = 2, lockAtMostFor = "-5")
		void negativePermit() {
		}

		@DistributedSemaphore(path = "/ceiling/malformed-permit", permits = 2, lockAtMostFor = "1 hour")
		void malformedPermit() {
		}

	}

	/** The advice without a template: enough to validate declarations at start-up. */
	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class Advice {

	}

	static class NegativeCeiling {

		@DistributedLock(path = "/start/negative-ceiling", lockAtMostFor = "-2s")
		public void work() {
		}

	}

	static class ZeroCeiling {

		@DistributedLock(path = "/start/zero-ceiling", lockAtMostFor = "0")
		public void work() {
		}

	}

	static class CeilingBelowFloor {

		@DistributedLock(path = "/start/below-floor", lockAtLeastFor = "1m", lockAtMostFor = "30s")
		public void work() {
		}

	}

	static class NegativePermitCeiling {

		@DistributedSemaphore(path = "/start/negative-permit-ceiling", permits = 2, lockAtMostFor = "-1ms")
		public void work() {
		}

	}

	static class ZeroPermitCeiling {

		@DistributedSemaphore(path = "/start/zero-permit-ceiling", permits = 2, lockAtMostFor = "0")
		public void work() {
		}

	}

}
