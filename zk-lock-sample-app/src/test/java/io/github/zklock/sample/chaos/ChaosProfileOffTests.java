package io.github.zklock.sample.chaos;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.ApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import io.github.zklock.test.AutoConfigureEmbeddedZooKeeper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application without the profile {@code chaos}: none of the workloads' endpoints, beans or
 * tables, and the report on its ordinary schedule. (The configuration of
 * {@code StockControllerTests}, so that the context is shared.)
 */
@SpringBootTest(properties = { "zk.lock.default-wait-time=1s", "sample.instance-id=controller-tests" })
@AutoConfigureEmbeddedZooKeeper
@AutoConfigureMockMvc
class ChaosProfileOffTests {

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private ApplicationContext context;

	@Autowired
	private JdbcClient jdbcClient;

	@Test
	void chaosEndpointsAreNotFound() {
		assertThat(this.mvc.post().uri("/chaos/counter/fenced/{name}", "off").param("op", "o"))
			.hasStatus(HttpStatus.NOT_FOUND);
		assertThat(this.mvc.post().uri("/chaos/counter/async/{name}", "off").param("op", "o"))
			.hasStatus(HttpStatus.NOT_FOUND);
		assertThat(this.mvc.get().uri("/chaos/accounts")).hasStatus(HttpStatus.NOT_FOUND);
	}

	@Test
	void noWorkloadBeansTablesOrSchedule() {
		for (Class<?> type : new Class<?>[] { ChaosConfiguration.class, ChaosController.class, ChaosExceptionHandler.class,
				CounterService.class, TransferService.class, CounterRepository.class, AccountRepository.class,
				ChaosProperties.class }) {
			assertThat(this.context.getBeanNamesForType(type)).as(type.getSimpleName()).isEmpty();
		}
		assertThat(this.jdbcClient
			.sql("SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE LOWER(TABLE_NAME) LIKE 'chaos%'")
			.query(Long.class)
			.single()).isZero();
		assertThat(this.context.getBean(Environment.class).getProperty("sample.report.cron")).isEqualTo("*/2 * * * * *");
	}

}
