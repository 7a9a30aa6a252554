package io.github.zklock;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/**
 * Tests for {@link LockRequest}: the wait-time rules (not given, zero, positive and
 * {@link LockRequest#WAIT_FOREVER} accepted, any other negative value rejected naming the key),
 * the defaults and the {@code with...} copies. No ZooKeeper.
 */
class LockRequestTests {

	private static final String KEY = "/orders/42";

	@Test
	void waitForeverIsMinusOneMillisecond() {
		assertThat(LockRequest.WAIT_FOREVER).isEqualTo(Duration.ofMillis(-1));
		assertThat(LockRequest.WAIT_FOREVER.toMillis()).isEqualTo(-1);
	}

	@Test
	void acceptsNoWaitTimeZeroPositiveAndWaitForever() {
		assertThat(new LockRequest(KEY, LockMode.EXCLUSIVE, true, null).waitTime()).isNull();
		assertThat(new LockRequest(KEY, LockMode.EXCLUSIVE, true, Duration.ZERO).waitTime()).isZero();
		assertThat(new LockRequest(KEY, LockMode.EXCLUSIVE, true, Duration.ofNanos(1)).waitTime())
			.isEqualTo(Duration.ofNanos(1));
		assertThat(new LockRequest(KEY, LockMode.READ, true, Duration.ofHours(1)).waitTime())
			.isEqualTo(Duration.ofHours(1));
		assertThat(new LockRequest(KEY, LockMode.WRITE, true, LockRequest.WAIT_FOREVER).waitTime())
			.isEqualTo(LockRequest.WAIT_FOREVER);
		// The same value built another way is the same wait time.
		assertThat(new LockRequest(KEY, LockMode.EXCLUSIVE, false, Duration.ofNanos(-1_000_000)).waitTime())
			.isEqualTo(LockRequest.WAIT_FOREVER);
	}

	@Test
	void rejectsOtherNegativeWaitTimesNamingTheKey() {
		for (Duration negative : List.of(Duration.ofMillis(-2), Duration.ofMillis(-5), Duration.ofNanos(-1),
				Duration.ofMillis(-1).plusNanos(1), Duration.ofMillis(-1).minusNanos(1), Duration.ofSeconds(-1),
				Duration.ofMillis(Long.MIN_VALUE))) {
			assertThatIllegalArgumentException().as("%s", negative)
				.isThrownBy(() -> new LockRequest(KEY, LockMode.EXCLUSIVE, true, negative))
				.withMessageContaining("'" + KEY + "'")
				.withMessageContaining(negative.toString())
				.withMessageContaining("WAIT_FOREVER");
		}
	}

	@Test
	void copyWithANegativeWaitTimeIsRejectedNamingTheKey() {
		LockRequest request = LockRequest.of(KEY);
		assertThatIllegalArgumentException().isThrownBy(() -> request.withWaitTime(Duration.ofMillis(-5)))
			.withMessageContaining("'" + KEY + "'");
	}

	@Test
	void waitsForeverOnlyForWaitForever() {
		assertThat(LockRequest.waitsForever(LockRequest.WAIT_FOREVER)).isTrue();
		assertThat(LockRequest.waitsForever(Duration.ofMillis(-1))).isTrue();
		assertThat(LockRequest.waitsForever(Duration.ZERO)).isFalse();
		assertThat(LockRequest.waitsForever(Duration.ofMillis(1))).isFalse();
		assertThat(LockRequest.waitsForever(Duration.ofMillis(-2))).isFalse();
		assertThat(LockRequest.waitsForever(Duration.ofNanos(-1))).isFalse();
	}

	@Test
	void ofIsAReentrantExclusiveRequestWithTheDefaultWaitTimeNamedAfterItsKey() {
		LockRequest request = LockRequest.of(KEY);
		assertThat(request.path()).isEqualTo(KEY);
		assertThat(request.mode()).isEqualTo(LockMode.EXCLUSIVE);
		assertThat(request.reentrant()).isTrue();
		assertThat(request.waitTime()).isNull();
		assertThat(request.name()).isEqualTo(KEY);
		assertThat(new LockRequest(KEY, LockMode.READ, false, Duration.ZERO).name()).isEqualTo(KEY);
		assertThat(new LockRequest(KEY, LockMode.READ, false, Duration.ZERO, null).name()).isEqualTo(KEY);
	}

	@Test
	void withMethodsCopyChangingOneComponent() {
		LockRequest original = new LockRequest(KEY, LockMode.EXCLUSIVE, true, Duration.ofSeconds(1), "/orders/{id}");

		assertThat(original.withMode(LockMode.WRITE))
			.isEqualTo(new LockRequest(KEY, LockMode.WRITE, true, Duration.ofSeconds(1), "/orders/{id}"));
		assertThat(original.withWaitTime(Duration.ZERO))
			.isEqualTo(new LockRequest(KEY, LockMode.EXCLUSIVE, true, Duration.ZERO, "/orders/{id}"));
		assertThat(original.withWaitTime(null))
			.isEqualTo(new LockRequest(KEY, LockMode.EXCLUSIVE, true, null, "/orders/{id}"));
		assertThat(original.withWaitTime(LockRequest.WAIT_FOREVER).waitTime()).isEqualTo(LockRequest.WAIT_FOREVER);
		assertThat(original.withReentrant(false))
			.isEqualTo(new LockRequest(KEY, LockMode.EXCLUSIVE, false, Duration.ofSeconds(1), "/orders/{id}"));
		assertThat(original.withName("/other/{id}"))
			.isEqualTo(new LockRequest(KEY, LockMode.EXCLUSIVE, true, Duration.ofSeconds(1), "/other/{id}"));
		// Immutable: the original is unchanged.
		assertThat(original)
			.isEqualTo(new LockRequest(KEY, LockMode.EXCLUSIVE, true, Duration.ofSeconds(1), "/orders/{id}"));
	}

	@Test
	void nameMustNotBeNullInACopy() {
		assertThatNullPointerException().isThrownBy(() -> LockRequest.of(KEY).withName(null))
			.withMessageContaining("name");
	}

	@Test
	void rejectsAMissingKeyOrMode() {
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> new LockRequest(null, LockMode.EXCLUSIVE, true, null));
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> LockRequest.of(""));
		assertThatNullPointerException().isThrownBy(() -> new LockRequest(KEY, null, true, null))
			.withMessageContaining("mode");
	}

}
