CREATE TABLE "cli_login_sessions" (
	"id" serial PRIMARY KEY NOT NULL,
	"state_hash" text NOT NULL,
	"user_code" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"user_id" integer,
	"expires_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone,
	"consumed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "cli_login_sessions_completed_has_user" CHECK ("cli_login_sessions"."status" = 'pending' or "cli_login_sessions"."user_id" is not null)
);
--> statement-breakpoint
CREATE TABLE "cli_login_tokens" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"token_hash" text NOT NULL,
	"token_prefix" text NOT NULL,
	"session_id" integer,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cli_synthetic_chains" (
	"id" serial PRIMARY KEY NOT NULL,
	"program_id" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "cli_login_sessions" ADD CONSTRAINT "cli_login_sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cli_login_tokens" ADD CONSTRAINT "cli_login_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cli_login_tokens" ADD CONSTRAINT "cli_login_tokens_session_id_cli_login_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."cli_login_sessions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cli_synthetic_chains" ADD CONSTRAINT "cli_synthetic_chains_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "cli_login_sessions_state_hash_unique" ON "cli_login_sessions" USING btree ("state_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "cli_login_tokens_token_hash_unique" ON "cli_login_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "cli_login_tokens_session_unique" ON "cli_login_tokens" USING btree ("session_id");--> statement-breakpoint
CREATE INDEX "cli_synthetic_chains_program_started_idx" ON "cli_synthetic_chains" USING btree ("program_id","started_at");
