/**
 * The workloads of the fault campaign ({@code zk-lock-chaos}), on only with the Spring profile
 * {@code chaos} ({@code --spring.profiles.active=chaos}): without it the application has none of
 * these beans, endpoints or tables. Every instance runs them on the one shared database; the
 * campaign calls the endpoints of {@link io.github.zklock.sample.chaos.ChaosController} with
 * operation ids of its own, and its checkers read the tables below ({@code chaos-schema.sql},
 * created at start-up after {@code schema.sql} by {@code application-chaos.yml}).
 *
 * <p>Counters ({@link io.github.zklock.sample.chaos.CounterService}):
 * <ul>
 * <li>{@code chaos_counter (name, counter_value, fencing_token)}: one row per counter, created by
 * its first increment; {@code fencing_token} is the row's fence;</li>
 * <li>{@code chaos_counter_op (id, op, counter_name, new_value, fencing_token, instance_id, via,
 * created_at)}: one row per committed increment, {@code via} {@code fenced}, {@code unfenced} or
 * {@code async}. In {@code new_value} order, the tokens of fenced and asynchronous increments never
 * decrease (equal for grants handed over locally). For a counter written through one endpoint only,
 * the checks are
 * {@code counter_value = COUNT(*)} of its rows and no two rows with one {@code new_value} (a lost
 * update: {@code SELECT counter_name, new_value FROM chaos_counter_op GROUP BY counter_name,
 * new_value HAVING COUNT(*) > 1}); the unfenced counters are expected to fail them under pauses
 * longer than the session timeout.</li>
 * </ul>
 *
 * <p>Transfers ({@link io.github.zklock.sample.chaos.TransferService}):
 * <ul>
 * <li>{@code chaos_account (id, balance, fencing_token)}: accounts 0 to N-1; the sum of
 * {@code balance} is N times the opening balance and no balance is negative;</li>
 * <li>{@code chaos_transfer (id, op, from_account, to_account, amount, from_token, to_token,
 * from_balance, to_balance, instance_id, created_at)}: one row per committed transfer, with the
 * balances it wrote and its two grants' tokens. Each account's final balance is the opening
 * balance minus the {@code amount} of its rows as {@code from_account} plus those as
 * {@code to_account}: a lost update breaks it.</li>
 * </ul>
 *
 * <p>Scheduled jobs: the profile runs the application's own
 * {@link io.github.zklock.sample.StockReport} every second ({@code sample.report.cron}), its
 * lock-based job {@code stock-report} and its {@code @LeaderOnly} job {@code leader-report}, each
 * fenced with the token of its lock or leadership term ({@code job_fence}). They write:
 * <ul>
 * <li>{@code job_runs (id, job, tick, instance_id, units_in_stock, created_at)}: one row per run
 * that committed its write, {@code tick} the scheduled fire time it served (epoch milliseconds).
 * A duplicate committed effect is a second row of one {@code job} and {@code tick}:
 * {@code SELECT job, tick, COUNT(*) FROM job_runs GROUP BY job, tick HAVING COUNT(*) > 1};</li>
 * <li>{@code job_attempts (id, job, tick, instance_id, outcome, created_at)}: one row per time a
 * job's body ran, {@code outcome} {@code committed}, {@code rejected} (the fence refused a
 * zombie's token), {@code late} (a run of that tick or a later one had committed: a resumed
 * scheduler's late fire) or {@code lost} (its lock or term had ended before it wrote). Two rows of
 * one job and tick are a tick run twice, which pauses longer than the session timeout cause;
 * {@link io.github.zklock.sample.demo.ScheduledAudit} reads both tables and counts both.</li>
 * </ul>
 * The tick is computed from the instance's own clock, so a clock jump moves the ticks an instance
 * serves: a jump back makes its runs {@code late}, a jump forward lets it commit a tick ahead, after
 * which the others' runs are {@code late} until their clocks reach it (idle ticks, no duplicate).
 *
 * <p>Spring AOT fixes the active profiles at build time: the jar's ahead-of-time context
 * ({@code spring.aot.enabled=true}) has none of these beans. Run the campaign on the ordinary
 * (reflective) start-up.
 */
@NullMarked
package io.github.zklock.sample.chaos;

import org.jspecify.annotations.NullMarked;
