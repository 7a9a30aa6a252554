package io.github.zklock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.springframework.util.ReflectionUtils;

import io.github.zklock.LockMode;
import io.github.zklock.OnBusy;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.LeaderOnly;
import io.github.zklock.expression.LockPathExpressionEvaluator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * How the declarations of scheduled work are read and validated: {@code lockAtLeastFor} in each
 * duration style and with placeholders, the non-reentrant lock it implies, and the values and
 * modes it rejects (naming the method); {@code @LeaderOnly} groups, placeholders, the groups
 * collected for start-up, and the groups and return types it rejects. No ZooKeeper involved.
 */
class ScheduledJobDeclarationTests {

	private final LockOperationSource locks = new LockOperationSource(new LockPathExpressionEvaluator(null));

	private final LeaderOnlyOperationSource leaders = new LeaderOnlyOperationSource();

	@Test
	void lockAtLeastForIsReadInEveryDurationStyle() {
		assertThat(lock("iso").prototype().lockAtLeastFor()).isEqualTo(Duration.ofSeconds(30));
		assertThat(lock("simple").prototype().lockAtLeastFor()).isEqualTo(Duration.ofMillis(500));
		assertThat(lock("plainMillis").prototype().lockAtLeastFor()).isEqualTo(Duration.ofMillis(1500));
		assertThat(lock("plainSeconds").prototype().lockAtLeastFor()).isEqualTo(Duration.ofSeconds(2));
		assertThat(lock("none").prototype().lockAtLeastFor()).isZero();
		assertThat(lock("zero").prototype().lockAtLeastFor()).isZero();
	}

	@Test
	void lockAtLeastForMakesTheLockNonReentrant() {
		LockOperation operation = lock("iso");
		assertThat(operation.prototype().reentrant()).isFalse();
		assertThat(operation.prototype().mode()).isEqualTo(LockMode.EXCLUSIVE);
		assertThat(operation.prototype().onBusy()).isEqualTo(OnBusy.SKIP);
		// Without it, the default stays reentrant.
		assertThat(lock("none").prototype().reentrant()).isTrue();
		assertThat(lock("zero").prototype().reentrant()).isTrue();
	}

	@Test
	void lockAtLeastForPlaceholdersAreResolved() {
		this.locks.setEmbeddedValueResolver((value) -> value.replace("${job.at-least}", "PT45S"));
		assertThat(lock("placeholder").prototype().lockAtLeastFor()).isEqualTo(Duration.ofSeconds(45));
	}

	@Test
	void malformedNegativeOrReadWriteLockAtLeastForIsRejectedNamingTheMethod() {
		assertThatIllegalStateException().isThrownBy(() -> lock("malformed"))
			.withMessageContaining("Jobs.malformed")
			.withMessageContaining("'soon' is not a duration");
		assertThatIllegalStateException().isThrownBy(() -> lock("negative"))
			.withMessageContaining("Jobs.negative")
			.withMessageContaining("negative");
		assertThatIllegalStateException().isThrownBy(() -> lock("write"))
			.withMessageContaining("Jobs.write")
			.withMessageContaining("keeps its WRITE grant for at least PT1S")
			.withMessageContaining("a WRITE grant is bound to the thread that acquired it");
	}

	@Test
	void lockAtLeastForSharesItsKeyWithNonReentrantLocksOnly() {
		assertThat(lock("keptReport")).isNotNull();
		assertThat(lock("nonReentrantReport")).isNotNull();
		assertThatIllegalStateException().isThrownBy(() -> lock("reentrantReport"))
			.withMessageContaining("Jobs.reentrantReport")
			.withMessageContaining("as lockAtLeastFor makes it")
			.withMessageContaining("do not exclude each other");
	}

	@Test
	void leaderOnlyGroupIsReadAndCollected() {
		assertThat(this.leaders.getGroup(method("billing"), Jobs.class)).isEqualTo("billing");
		assertThat(this.leaders.getGroup(method("iso"), Jobs.class)).isNull();
		assertThat(this.leaders.getKnownGroups()).containsExactly("billing");
	}

	@Test
	void leaderOnlyPlaceholdersAreResolved() {
		this.leaders.setEmbeddedValueResolver((value) -> value.replace("${job.group}", "reports"));
		assertThat(this.leaders.getGroup(method("configuredGroup"), Jobs.class)).isEqualTo("reports");
	}

	@Test
	void illegalGroupsAndPrimitiveReturnTypesAreRejectedNamingTheMethod() {
		assertThatIllegalStateException().isThrownBy(() -> this.leaders.getGroup(method("emptyGroup"), Jobs.class))
			.withMessageContaining("Jobs.emptyGroup")
			.withMessageContaining("must not be null or empty");
		assertThatIllegalStateException().isThrownBy(() -> this.leaders.getGroup(method("slashGroup"), Jobs.class))
			.withMessageContaining("Jobs.slashGroup")
			.withMessageContaining("single ZooKeeper path segment");
		assertThatIllegalStateException().isThrownBy(() -> this.leaders.getGroup(method("dotDotGroup"), Jobs.class))
			.withMessageContaining("Jobs.dotDotGroup")
			.withMessageContaining("Invalid leadership group name '..'");
		assertThatIllegalStateException().isThrownBy(() -> this.leaders.getGroup(method("counting"), Jobs.class))
			.withMessageContaining("Jobs.counting")
			.withMessageContaining("int");
		assertThat(this.leaders.getKnownGroups()).isEmpty();
	}

	private LockOperation lock(String name) {
		return this.locks.getOperation(method(name), Jobs.class);
	}

	private static Method method(String name) {
		Method method = ReflectionUtils.findMethod(Jobs.class, name);
		assertThat(method).as(name).isNotNull();
		return method;
	}

	static class Jobs {

		@DistributedLock(path = "/jobs/iso", waitTime = "0", onBusy = OnBusy.SKIP, lockAtLeastFor = "PT30S")
		void iso() {
		}

		@DistributedLock(path = "/jobs/simple", lockAtLeastFor = "500ms")
		void simple() {
		}

		@DistributedLock(path = "/jobs/plain-millis", lockAtLeastFor = "1500")
		void plainMillis() {
		}

		@DistributedLock(path = "/jobs/plain-seconds", lockAtLeastFor = "2s")
		void plainSeconds() {
		}

		@DistributedLock(path = "/jobs/none")
		void none() {
		}

		@DistributedLock(path = "/jobs/zero", lockAtLeastFor = "0s")
		void zero() {
		}

		@DistributedLock(path = "/jobs/placeholder", lockAtLeastFor = "${job.at-least}")
		void placeholder() {
		}

		@DistributedLock(path = "/jobs/malformed", lockAtLeastFor = "soon")
		void malformed() {
		}

		@DistributedLock(path = "/jobs/negative", lockAtLeastFor = "-1s")
		void negative() {
		}

		@DistributedLock(path = "/jobs/write", mode = LockMode.WRITE, lockAtLeastFor = "1s")
		void write() {
		}

		@DistributedLock(path = "/jobs/report", lockAtLeastFor = "1s")
		void keptReport() {
		}

		@DistributedLock(path = "/jobs/report", reentrant = false)
		void nonReentrantReport() {
		}

		@DistributedLock(path = "/jobs/report")
		void reentrantReport() {
		}

		@LeaderOnly(group = "billing")
		Optional<String> billing() {
			return Optional.of("billed");
		}

		@LeaderOnly(group = "${job.group}")
		void configuredGroup() {
		}

		@LeaderOnly(group = "")
		void emptyGroup() {
		}

		@LeaderOnly(group = "a/b")
		void slashGroup() {
		}

		@LeaderOnly(group = "..")
		void dotDotGroup() {
		}

		@LeaderOnly(group = "counting")
		int counting() {
			return 1;
		}

	}

}
