package io.github.zklock.test;

import org.apache.curator.ensemble.EnsembleProvider;
import org.apache.curator.ensemble.fixed.FixedEnsembleProvider;
import org.apache.curator.test.TestingServer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the in-process ZooKeeper server: with
 * {@code zk.lock.embedded.enabled=true} it starts an {@link EmbeddedZooKeeper} on
 * {@code zk.lock.embedded.port} (0, the default, picks a free port) and gives zk-lock's
 * auto-configured Curator client a Curator {@link EnsembleProvider} pointing at it, which takes
 * the place of {@code zk.lock.connect-string}. The server starts before the client (the provider
 * needs it) and stops after it, when the context closes.
 *
 * <p>Backs off, starting no server, when the application defines its own
 * {@code EnsembleProvider}, and with {@code zk.lock.enabled=false}; an application's own
 * {@code EmbeddedZooKeeper} bean replaces the server it would start.
 */
@AutoConfiguration(beforeName = "io.github.zklock.autoconfigure.ZkLockAutoConfiguration")
@ConditionalOnClass(TestingServer.class)
@ConditionalOnBooleanProperty(name = "zk.lock.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty("zk.lock.embedded.enabled")
@ConditionalOnMissingBean(EnsembleProvider.class)
@EnableConfigurationProperties(EmbeddedZooKeeperProperties.class)
public class EmbeddedZooKeeperAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	EmbeddedZooKeeper zkLockEmbeddedZooKeeper(EmbeddedZooKeeperProperties properties) throws Exception {
		return new EmbeddedZooKeeper(properties.getPort());
	}

	@Bean
	@ConditionalOnMissingBean
	EnsembleProvider zkLockEmbeddedEnsembleProvider(EmbeddedZooKeeper embeddedZooKeeper) {
		return new FixedEnsembleProvider(embeddedZooKeeper.getConnectString());
	}

}
