package io.github.zklock;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RequestRules;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/**
 * Tests for {@link LockRequest}, {@link LockTarget} and {@link LockResult}: the wait-time rules (not
 * given, zero, positive and {@link LockRequest#WAIT_FOREVER} accepted, any other negative value
 * rejected naming the key), the defaults, the factories ({@code of(key)}, {@code of(keys)},
 * {@code permit(key, n)}) and the {@code with...} copies, the rules between mode, reentrancy and
 * permits, the target's checks, a skipped run told from a {@code null} result, and a result whose
 * lock was lost after the work. No ZooKeeper.
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
		assertThat(LockRequest.of(KEY).waitTime()).isNull();
		assertThat(LockRequest.of(KEY).withWaitTime(Duration.ZERO).waitTime()).isZero();
		assertThat(LockRequest.of(KEY).withWaitTime(Duration.ofNanos(1)).waitTime())
			.isEqualTo(Duration.ofNanos(1));
		assertThat(LockRequest.of(KEY).withMode(LockMode.READ).withWaitTime(Duration.ofHours(1)).waitTime())
			.isEqualTo(Duration.ofHours(1));
		assertThat(LockRequest.of(KEY).withMode(LockMode.WRITE).withWaitTime(LockRequest.WAIT_FOREVER).waitTime())
			.isEqualTo(LockRequest.WAIT_FOREVER);
		// The same value built another way is the same wait time.
		assertThat(LockRequest.of(KEY).withReentrant(false).withWaitTime(Duration.ofNanos(-1_000_000)).waitTime())
			.isEqualTo(LockRequest.WAIT_FOREVER);
	}

	@Test
	void rejectsOtherNegativeWaitTimesNamingTheKey() {
		for (Duration negative : List.of(Duration.ofMillis(-2), Duration.ofMillis(-5), Duration.ofNanos(-1),
				Duration.ofMillis(-1).plusNanos(1), Duration.ofMillis(-1).minusNanos(1), Duration.ofSeconds(-1),
				Duration.ofMillis(Long.MIN_VALUE))) {
			assertThatIllegalArgumentException().as("%s", negative)
				.isThrownBy(() -> LockRequest.of(KEY).withWaitTime(negative))
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
		assertThat(RequestRules.waitsForever(LockRequest.WAIT_FOREVER)).isTrue();
		assertThat(RequestRules.waitsForever(Duration.ofMillis(-1))).isTrue();
		assertThat(RequestRules.waitsForever(Duration.ZERO)).isFalse();
		assertThat(RequestRules.waitsForever(Duration.ofMillis(1))).isFalse();
		assertThat(RequestRules.waitsForever(Duration.ofMillis(-2))).isFalse();
		assertThat(RequestRules.waitsForever(Duration.ofNanos(-1))).isFalse();
	}

	@Test
	void ofIsAReentrantExclusiveRequestWithTheDefaultWaitTimeNamedAfterItsKey() {
		LockRequest request = LockRequest.of(KEY);
		assertThat(request.keys()).containsExactly(KEY);
		assertThat(request.mode()).isEqualTo(LockMode.EXCLUSIVE);
		assertThat(request.reentrant()).isTrue();
		assertThat(request.waitTime()).isNull();
		assertThat(request.name()).isEqualTo(KEY);
		assertThat(LockRequest.of(KEY).withMode(LockMode.READ).withWaitTime(Duration.ZERO).name()).isEqualTo(KEY);
		assertThat(request.onBusy()).isEqualTo(OnBusy.FAIL);
		assertThat(request.permits()).isZero();
		assertThat(request.isPermit()).isFalse();
		assertThat(request.isMultiLock()).isFalse();
		assertThat(request.lockAtLeastFor()).isZero();
	}

	@Test
	void severalKeysMakeAMultiLockNamedAfterThemAsGiven() {
		LockRequest request = LockRequest.of(List.of("/b", "/a", "/b"));
		// Kept as given: the template sorts them by lock path and merges duplicates.
		assertThat(request.keys()).containsExactly("/b", "/a", "/b");
		assertThat(request.isMultiLock()).isTrue();
		assertThat(request.name()).isEqualTo("/b,/a,/b");
		assertThat(request.withKeys(List.of("/c")).name()).as("withKeys keeps the name").isEqualTo("/b,/a,/b");
		assertThat(LockRequest.of(List.of(KEY))).isEqualTo(LockRequest.of(KEY));
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.of(List.of()))
			.withMessageContaining("at least one key");
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> LockRequest.of(Arrays.asList("/a", null)));
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> LockRequest.of(List.of("/a", "")));
		assertThatNullPointerException().isThrownBy(() -> LockRequest.of((Collection<String>) null));
	}

	@Test
	void permitIsANonReentrantExclusiveRequestOfOneKey() {
		LockRequest permit = LockRequest.permit(KEY, 3);
		assertThat(permit.permits()).isEqualTo(3);
		assertThat(permit.isPermit()).isTrue();
		assertThat(permit.mode()).isEqualTo(LockMode.EXCLUSIVE);
		assertThat(permit.reentrant()).isFalse();
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.permit(KEY, 0))
			.withMessageContaining("at least one permit");
		assertThatIllegalArgumentException().isThrownBy(() -> permit.withReentrant(true))
			.withMessageContaining("non-reentrant EXCLUSIVE");
		assertThatIllegalArgumentException().isThrownBy(() -> permit.withMode(LockMode.READ));
		assertThatIllegalArgumentException().isThrownBy(() -> permit.withKeys(List.of("/a", "/b")))
			.withMessageContaining("one key");
	}

	@Test
	void readAndWriteAreAlwaysReentrant() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockRequest.of(KEY).withMode(LockMode.READ).withReentrant(false))
			.withMessageContaining("'" + KEY + "'")
			.withMessageContaining("always reentrant");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockRequest.of(KEY).withReentrant(false).withMode(LockMode.WRITE));
		assertThat(LockRequest.of(KEY).withMode(LockMode.WRITE).reentrant()).isTrue();
	}

	@Test
	void onBusyPolicyIsCopiedAndRequired() {
		assertThat(LockRequest.of(KEY).withOnBusy(OnBusy.SKIP).onBusy()).isEqualTo(OnBusy.SKIP);
		assertThat(LockRequest.of(KEY).withOnBusy(OnBusy.SKIP).withOnBusy(OnBusy.FAIL))
			.isEqualTo(LockRequest.of(KEY));
		assertThatNullPointerException().isThrownBy(() -> LockRequest.of(KEY).withOnBusy(null))
			.withMessageContaining("onBusy");
	}

	@Test
	void targetChecksTheRulesOfOneKeyAndNeedsAWaitTime() {
		LockTarget target = new LockTarget(KEY, LockMode.EXCLUSIVE, false, 2, Duration.ZERO);
		assertThat(target.isPermit()).isTrue();
		assertThat(new LockTarget(KEY, LockMode.READ, true, 0, LockRequest.WAIT_FOREVER).isPermit()).isFalse();
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> new LockTarget("", LockMode.EXCLUSIVE, true, 0, Duration.ZERO));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LockTarget(KEY, LockMode.READ, false, 0, Duration.ZERO))
			.withMessageContaining("always reentrant");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LockTarget(KEY, LockMode.WRITE, true, 2, Duration.ZERO))
			.withMessageContaining("permit");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LockTarget(KEY, LockMode.EXCLUSIVE, true, 0, Duration.ofMillis(-2)))
			.withMessageContaining("WAIT_FOREVER");
		assertThatNullPointerException().isThrownBy(() -> new LockTarget(KEY, LockMode.EXCLUSIVE, true, 0, null))
			.withMessageContaining("waitTime");
	}

	@Test
	void resultTellsASkippedRunFromANullResult() {
		LockResult<String> nothing = LockResult.executed(null);
		LockResult<String> skipped = LockResult.skipped();
		assertThat(nothing.wasExecuted()).isTrue();
		assertThat(nothing.result()).isNull();
		assertThat(nothing.orElse("other")).isNull();
		assertThat(nothing.orElseGet(() -> {
			throw new AssertionError("called for a run that was executed");
		})).isNull();
		assertThat(skipped.wasExecuted()).isFalse();
		assertThat(skipped.orElse("other")).isEqualTo("other");
		assertThat(skipped.orElseGet(() -> "supplied")).isEqualTo("supplied");
		assertThatIllegalStateException().isThrownBy(skipped::result).withMessageContaining("skipped");
		assertThat(nothing).isNotEqualTo(skipped).isEqualTo(LockResult.executed(null));
		assertThat(LockResult.executed("x")).isEqualTo(LockResult.executed("x"))
			.hasSameHashCodeAs(LockResult.executed("x"))
			.isNotEqualTo(LockResult.executed("y"));
		assertThat(skipped).isSameAs(LockResult.skipped()).hasToString("LockResult[skipped]");
		assertThat(LockResult.executed(42)).hasToString("LockResult[executed: 42]");
	}

	@Test
	void resultOfWorkWhoseLockWasLostAfterItIsExecutedWithItsValue() {
		LockResult<String> lostAfter = LockResult.executedThenLost("committed");
		assertThat(lostAfter.wasExecuted()).isTrue();
		assertThat(lostAfter.lockLostAfterWork()).isTrue();
		assertThat(lostAfter.result()).isEqualTo("committed");
		assertThat(lostAfter.orElse("other")).isEqualTo("committed");
		assertThat(LockResult.executed("committed").lockLostAfterWork()).isFalse();
		assertThat(LockResult.<String>skipped().lockLostAfterWork()).isFalse();
		assertThat(lostAfter).isEqualTo(LockResult.executedThenLost("committed"))
			.hasSameHashCodeAs(LockResult.executedThenLost("committed"))
			.isNotEqualTo(LockResult.executed("committed"))
			.hasToString("LockResult[executed: committed, lock lost after the work]");
		assertThat(LockResult.executedThenLost(null).result()).isNull();
	}

	@Test
	void withMethodsCopyChangingOneComponent() {
		LockRequest original = LockRequest.of(KEY).withWaitTime(Duration.ofSeconds(1)).withName("/orders/{id}");

		assertThat(original.withMode(LockMode.WRITE))
			.isEqualTo(LockRequest.of(KEY).withMode(LockMode.WRITE).withWaitTime(Duration.ofSeconds(1)).withName("/orders/{id}"));
		assertThat(original.withWaitTime(Duration.ZERO))
			.isEqualTo(LockRequest.of(KEY).withWaitTime(Duration.ZERO).withName("/orders/{id}"));
		assertThat(original.withWaitTime(null))
			.isEqualTo(LockRequest.of(KEY).withName("/orders/{id}"));
		assertThat(original.withWaitTime(LockRequest.WAIT_FOREVER).waitTime()).isEqualTo(LockRequest.WAIT_FOREVER);
		assertThat(original.withReentrant(false))
			.isEqualTo(LockRequest.of(KEY).withReentrant(false).withWaitTime(Duration.ofSeconds(1)).withName("/orders/{id}"));
		assertThat(original.withName("/other/{id}"))
			.isEqualTo(LockRequest.of(KEY).withWaitTime(Duration.ofSeconds(1)).withName("/other/{id}"));
		// Immutable: the original is unchanged.
		assertThat(original)
			.isEqualTo(LockRequest.of(KEY).withWaitTime(Duration.ofSeconds(1)).withName("/orders/{id}"));
	}

	@Test
	void nameMustNotBeNullInACopy() {
		assertThatNullPointerException().isThrownBy(() -> LockRequest.of(KEY).withName(null))
			.withMessageContaining("name");
	}

	@Test
	void rejectsAMissingKeyOrMode() {
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> LockRequest.of((String) null));
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> LockRequest.of(""));
		assertThatNullPointerException().isThrownBy(() -> LockRequest.of(KEY).withMode(null))
			.withMessageContaining("mode");
	}

}
