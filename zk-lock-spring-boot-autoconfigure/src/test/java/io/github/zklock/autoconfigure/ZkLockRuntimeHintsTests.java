package io.github.zklock.autoconfigure;

import java.util.List;

import org.apache.zookeeper.ClientCnxnSocketNIO;
import org.apache.zookeeper.ClientCnxnSocketNetty;
import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.context.annotation.ImportRuntimeHints;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ZkLockRuntimeHints}: the client sockets that {@code zk.lock.client-socket} names
 * can be constructed reflectively as ZooKeeper does, and the auto-configuration imports the hints.
 */
class ZkLockRuntimeHintsTests {

	@Test
	void clientSocketsCanBeConstructedReflectively() throws Exception {
		RuntimeHints hints = new RuntimeHints();
		new ZkLockRuntimeHints().registerHints(hints, getClass().getClassLoader());
		for (Class<?> socket : List.of(ClientCnxnSocketNetty.class, ClientCnxnSocketNIO.class)) {
			assertThat(RuntimeHintsPredicates.reflection()
				.onConstructorInvocation(socket.getDeclaredConstructor(ZKClientConfig.class))).accepts(hints);
		}
		assertThat(ZkLockRuntimeHints.CLIENT_SOCKETS).containsExactlyInAnyOrder(ClientCnxnSocketNetty.class.getName(),
				ClientCnxnSocketNIO.class.getName());
	}

	@Test
	void autoConfigurationImportsTheHints() {
		ImportRuntimeHints imported = ZkLockAutoConfiguration.class.getAnnotation(ImportRuntimeHints.class);
		assertThat(imported).isNotNull();
		assertThat(imported.value()).contains(ZkLockRuntimeHints.class);
	}

}
