package io.github.zklock.autoconfigure;

import org.apache.curator.framework.CuratorFramework;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportRuntimeHints;

/**
 * Auto-configuration for zk-lock, in three parts:
 * <ul>
 * <li>{@link ZkLockClientConfiguration}: a started {@link CuratorFramework} built from
 * {@code zk.lock.*}, unless the application defines one;</li>
 * <li>{@link ZkLockTemplateConfiguration}: the {@link io.github.zklock.curator.CuratorLockRegistry},
 * the {@link io.github.zklock.LockTemplate} and the {@code @DistributedLock} advice
 * ({@link io.github.zklock.annotation.EnableDistributedLocks @EnableDistributedLocks}, which
 * also brings the {@code @LeaderOnly} advice);</li>
 * <li>{@link ZkLockLeadershipConfiguration}: the {@link io.github.zklock.Leadership} bean that
 * {@code @LeaderOnly} methods ask.</li>
 * </ul>
 * {@code zk.lock.enabled=false} switches it all off.
 */
@AutoConfiguration
@ConditionalOnClass(CuratorFramework.class)
@ConditionalOnBooleanProperty(name = "zk.lock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(ZkLockProperties.class)
@Import({ ZkLockClientConfiguration.class, ZkLockTemplateConfiguration.class, ZkLockLeadershipConfiguration.class })
@ImportRuntimeHints(ZkLockRuntimeHints.class)
public class ZkLockAutoConfiguration {

}
