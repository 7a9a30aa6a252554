package io.github.zklock.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method only while this application instance leads {@link #group()}; on
 * every other instance the call is skipped: the method is not invoked and returns {@code null}
 * ({@code Optional.empty()} for an {@code Optional} return type), as {@link io.github.zklock.OnBusy#SKIP} does.
 * Made for scheduled work that one instance at a time should do:
 * <pre class="code">
 * &#64;Scheduled(fixedDelay = 10_000)
 * &#64;LeaderOnly(group = "billing")
 * public void chargeDueInvoices() { ... }
 * </pre>
 *
 * <p>Leadership is decided by Curator's {@code LeaderLatch} (the leader election recipe of the
 * ZooKeeper documentation: each participant creates an ephemeral sequential znode, the lowest
 * leads, each other watches its predecessor), one latch per group below
 * {@code zk.lock.root-path}, through the {@link io.github.zklock.Leadership} bean. Every group
 * named by an annotation is joined when the application context starts and left when it closes,
 * before the ZooKeeper client closes; the leader keeps leading until it leaves, yields
 * ({@code Leadership.yieldLeadership}) or loses its session. Leadership in doubt (connection
 * SUSPENDED) counts as not leading: a call does not start then. The check is made once, before
 * the call: a method that is running when leadership is revoked is not interrupted
 * ({@code LeadershipRevokedEvent} tells the application).
 *
 * <p>Rejected at start-up, naming the method: an empty or illegal group name (it must be one
 * ZooKeeper path segment), a primitive return type other than {@code void}, and an application
 * without a {@link io.github.zklock.Leadership} bean (the Spring Boot starter defines one). The
 * group may hold {@code ${...}} placeholders, resolved at start-up. Combined with
 * {@link DistributedLock @DistributedLock} on the same method, leadership is checked first. With
 * the starter switched off ({@code zk.lock.enabled=false}) no advice is applied and the method runs
 * on every instance, as {@code @DistributedLock} methods then run unlocked.
 *
 * @see io.github.zklock.Leadership
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface LeaderOnly {

	/**
	 * The leadership group: the instances that compete for leadership of the same group elect
	 * one leader among them. One ZooKeeper path segment, such as {@code billing}.
	 * @return the group name
	 */
	String group();

}
